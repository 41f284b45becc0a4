#!/usr/bin/env bash
# Train ticktock-tiny on a GPU machine without package access (how the shipped model was made).
# Needs, in the working tree: .gpu-espeak/ (../shared/gpu/espeak-ng/prepare.sh .gpu-espeak) and
# .whl/ (soundfile, cffi, pycparser wheels for the machine's Python). Usage:
#   scripts/gpu_train_tiny.sh OUT_DIR SECONDS [extra `ticktock train base` args]
# The trained model is also kept in runs/last-<name of OUT_DIR>/ (an ignored path, so a warm
# machine still has it for the next stage's --init).
set -euo pipefail
out=${1:?out dir}; budget=${2:-470}; shift 2 || true
source scripts/gpu_env.sh  # espeak-ng, wheels, PYTHONPATH
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name())"
python3 -m ticktock.cli train base --out "$out" --time-budget "$budget" "$@"
keep=runs/last-$(basename "$out"); rm -rf "$keep"; mkdir -p runs; cp -r "$out/model" "$keep"
# results come back in files of at most 16 MiB
split -b 15M "$out/model/model.safetensors" "$out/model/model.safetensors.part-" && rm "$out/model/model.safetensors"
ls -la "$out" "$out/model"
