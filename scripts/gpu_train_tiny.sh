#!/usr/bin/env bash
# Train ticktock-tiny on a GPU machine without package access (how the shipped model was made).
# Needs, in the working tree: .gpu-espeak/ (../shared/gpu/espeak-ng/prepare.sh .gpu-espeak) and
# .whl/ (soundfile, cffi, pycparser wheels for the machine's Python). Usage:
#   scripts/gpu_train_tiny.sh OUT_DIR SECONDS [extra `ticktock train base` args]
set -euo pipefail
out=${1:?out dir}; budget=${2:-470}; shift 2 || true
mkdir -p /tmp/esp && for f in .gpu-espeak/*.deb; do dpkg -x "$f" /tmp/esp; done
cp .gpu-espeak/libpcaudio.so.0 /tmp/esp/usr/lib/x86_64-linux-gnu/
export LD_LIBRARY_PATH=/tmp/esp/usr/lib/x86_64-linux-gnu
export TICKTOCK_ESPEAK=/tmp/esp/usr/bin/espeak-ng TICKTOCK_ESPEAK_DATA=/tmp/esp/usr/lib/x86_64-linux-gnu
if [ -d .whl ]; then python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl; fi
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name())"
python3 -m ticktock.cli train base --out "$out" --time-budget "$budget" "$@"
# results come back in files of at most 16 MiB
split -b 15M "$out/model/model.safetensors" "$out/model/model.safetensors.part-" && rm "$out/model/model.safetensors"
ls -la "$out" "$out/model"
