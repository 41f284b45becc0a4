#!/usr/bin/env bash
# One stage of the retraining (experiments/retraining-plan.md) on a GPU machine without package access.
# Prepare once, here:  ../shared/gpu/espeak-ng/prepare.sh .gpu-espeak; scripts/prepare_festival.sh .gpu-festival;
#                      scripts/prepare_augment.sh .gpu-augment   (and .whl/ as scripts/gpu_train_tiny.sh says)
# then run with carry [.gpu-espeak, .whl, .gpu-festival, .gpu-augment, .gpu-voices] (63.8 MiB with the tracked tree,
# the side channel slimmed; scripts/prepare_voices.sh builds .gpu-voices):
#   experiments/retraining/run.sh OUT_DIR SECONDS INIT_MODEL_DIR SEED [TRAIN_BASE_ARGS...]
# e.g. `... --set data=multi-engine-scrambled` for the scrambled-listening stage (retraining-plan.md).
# Stage 1 continues the shipped model (src/ticktock/assets/ticktock-tiny); later stages runs/last-<previous OUT>.
# The recipe is the `retrain` preset: stage M's (docs/model-card.md) with data multi-engine.
set -euo pipefail
out=${1:?out dir}; budget=${2:?seconds}; init=${3:?model dir to continue}; seed=${4:?seed}; shift 4
source scripts/gpu_env.sh
python3 -c "import pyworld; from ticktock.train.data import other_training_voices as o; print('other engines:', ', '.join(o()))"
exec scripts/gpu_train_tiny.sh "$out" "$budget" --config retrain --init "$init" --seed "$seed" --workers 15 "$@"
