#!/usr/bin/env bash
# Train the transcription side channel (docs/side-channel.md) on a GPU machine without package access.
# Needs, in the working tree (carried): .gpu-espeak/ (../shared/gpu/espeak-ng/prepare.sh .gpu-espeak) and
# .whl/ with the soundfile, cffi and pycparser wheels, as for scripts/gpu_train_tiny.sh.
# PEFT: the GPU image ships peft together with what it imports (transformers, accelerate, psutil, pyyaml,
# tqdm, huggingface_hub, safetensors, packaging). On an image without it, add these wheels to .whl/ first:
#   pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#     --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 -d .whl \
#     peft accelerate transformers huggingface_hub tqdm pyyaml psutil packaging regex filelock fsspec hf-xet
# (peft imports transformers and accelerate at import time; torch, numpy, safetensors and tokenizers are
# already there.) Usage:
#   scripts/gpu_train_side_channel.sh OUT_DIR SECONDS [extra `ticktock train side-channel` args]
# e.g.  scripts/gpu_train_side_channel.sh $OUT/ad 540 --config paper --batch 64
#       scripts/gpu_train_side_channel.sh $OUT/ablate 540 --config my-ablation.json
# (one recipe; a staged one, `--config shipped --stage NAME`, runs through `ticktock train side-channel` itself:
# docs/side-channel-training.md). With RECALL_PROBES=1 in the environment, experiments/probes/recall_probes.sh runs on the trained model first (its summary
# goes to the output). Comes back as 6 files: model/model.safetensors.part-* (the merged fp16 weights, split),
# bundle.tar (model/*.json (config, tokenizer, merged marker), adapter/ (empty after --full), train_config.json, probes/),
# train_log.jsonl, loss.png and side_channel.json. Put back together with:
#   cat OUT/model/model.safetensors.part-* > OUT/model/model.safetensors && tar -xf OUT/bundle.tar -C OUT
set -euo pipefail
out=${1:?out dir}; budget=${2:-470}; shift 2 || true
source scripts/gpu_env.sh  # espeak-ng, wheels, PYTHONPATH
python3 -c "import torch, peft; print(torch.__version__, peft.__version__, torch.cuda.get_device_name())"
python3 -m ticktock.cli train side-channel --out "$out" --time-budget "$budget" "$@"
if [ "${RECALL_PROBES:-0}" = 1 ]; then experiments/probes/recall_probes.sh "$out" "$out/probes"; fi
# results come back in at most 8 files of at most 16 MiB
cd "$out"
split -b 15M model/model.safetensors model/model.safetensors.part- && rm model/model.safetensors
mkdir -p probes adapter  # a --full run has no adapter/
tar -cf bundle.tar model/*.json adapter train_config.json probes
rm -r adapter probes model/*.json train_config.json
ls -la . model
