#!/usr/bin/env bash
# Fine-tune a small random-init Qwen2.5-Omni thinker into a duplex model on the synthetic world, then score it
# on the held-out suite (README.md beside this file).
#   experiments/omni_finetune/run.sh WORK SECONDS [more `ticktock train base` options]
# WORK/checkpoint: the thinker checkpoint; WORK/run: the training run (model/, train_log.jsonl, loss.png);
# WORK/heldout.json: `ticktock eval --suite heldout`. On a GPU machine without package access, .gpu-espeak/
# in the working tree brings espeak-ng (scripts/gpu_env.sh, as scripts/gpu_train_tiny.sh uses it).
set -euo pipefail
work=${1:?work dir}; budget=${2:?training seconds}; shift 2
if [ -d .gpu-espeak ]; then source scripts/gpu_env.sh; else export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1; fi
mkdir -p "$work"
python3 experiments/omni_finetune/make_checkpoint.py "$work/checkpoint"
python3 -m ticktock.cli train base --config omni-finetune --init "$work/checkpoint" --out "$work/run" \
    --time-budget "$budget" --device cuda --workers 14 "$@"
python3 -m ticktock.cli eval --suite heldout --model "$work/run/model" --json --workers 14 > "$work/heldout.json"
python3 -c "import json, sys; s = json.load(open(sys.argv[1])); print('heldout decision_acc', s['decision_acc'])" \
    "$work/heldout.json"
