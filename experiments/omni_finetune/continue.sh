#!/usr/bin/env bash
# Continue an omni fine-tuning run from its model for SECONDS more (a fresh warm-up and schedule at lr 1e-3), score
# it on the held-out suite and, given OUT, pack it for the way back (pack.sh), so the next command can continue it.
#   experiments/omni_finetune/continue.sh WORK MODEL_DIR SECONDS [OUT]
set -euo pipefail
work=${1:?work dir}; from=${2:?model dir}; budget=${3:?training seconds}; out=${4:-}
if [ -d .gpu-espeak ]; then source scripts/gpu_env.sh; else export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1; fi
mkdir -p "$work"
python3 -m ticktock.cli train base --config omni-finetune --init "$from" --out "$work/run" --time-budget "$budget" \
    --device "${DEVICE:-cuda}" --lr 1e-3 --set warmup=100 --workers "${WORKERS:-14}" ${TRAIN_ARGS:-}
python3 -m ticktock.cli eval --suite heldout --model "$work/run/model" --json --workers "${WORKERS:-14}" \
    ${EVAL_ARGS:-} > "$work/heldout.json"
python3 -c "import json, sys; s = json.load(open(sys.argv[1])); print('heldout decision_acc', s['decision_acc'])" \
    "$work/heldout.json"
[ -z "$out" ] || experiments/omni_finetune/pack.sh "$work" "$out"
