#!/usr/bin/env bash
# Stages of a staged side-channel recipe (docs/side-channel-training.md) on a GPU machine without package access,
# a few per device call, the chain carried between calls. Needs .gpu-espeak/ and .whl/ (scripts/gpu_env.sh); the
# stage each one continues must be under RUNS (carry it: only its side_channel.json and adapter/ or model/ count).
#   scripts/gpu_side_channel_stages.sh RUNS OUT CONFIG STAGE [STAGE ...]
# e.g. scripts/gpu_side_channel_stages.sh runs/shipped $OUT shipped m m2
#   scripts/gpu_side_channel_stages.sh RUNS OUT CONFIG next SECONDS
# runs the stages that continue what RUNS holds and fit SECONDS (at least one; `StagedRecipe.next_stages`).
# BASE=DIR fits it to that base model (default: the shipped ticktock-tiny), e.g. a retrained base carried in runs/.
# (DEVICE=cpu TRAIN_ARGS='--steps 2 --batch 4' try it here.)
# Each stage comes back as OUT/STAGE.tar (the run's record and a LoRA's adapter/, what a later stage continues) and,
# for a whole decoder, its model.safetensors in parts (OUT/STAGE.safetensors.part-*: at most 16 MiB a file, 8 files a
# call). Put back together here with
#   scripts/gpu_side_channel_stages.sh unpack RUNS FETCHED_DIR
set -euo pipefail
if [ "${1:-}" = unpack ]; then
  runs=${2:?runs}; got=${3:?fetched dir}
  for t in "$got"/*.tar; do
    s=$(basename "$t" .tar); mkdir -p "$runs/$s"; tar -xf "$t" -C "$runs/$s"
    if ls "$got/$s".safetensors.part-* >/dev/null 2>&1; then
      cat "$got/$s".safetensors.part-* > "$runs/$s/model/model.safetensors"
    fi
    echo "$runs/$s: $(ls "$runs/$s" | tr '\n' ' ')"
  done
  exit 0
fi
runs=${1:?runs}; out=${2:?out}; config=${3:?config}; shift 3
source scripts/gpu_env.sh
python3 -c "import torch, peft; print(torch.__version__, peft.__version__, torch.cuda.is_available() and torch.cuda.get_device_name())"
if [ "${1:-}" = next ]; then
  set -- $(python3 -c "import sys; from pathlib import Path; from ticktock.train.side_channel import load_config
c, runs, seconds = sys.argv[1:]; print(' '.join(load_config(c).next_stages(Path(runs), float(seconds))))" \
    "$config" "$runs" "${2:?seconds}")
  [ $# -gt 0 ] || { echo "every stage of $config is done under $runs"; exit 0; }
  echo "next: $*"
fi
for stage in "$@"; do
  echo "[$SECONDS s] stage $stage"
  python3 -m ticktock.cli train side-channel --config "$config" --out "$runs" --stage "$stage" --device "${DEVICE:-cuda}" --workers 14 \
    ${BASE:+--base "$BASE"} ${TRAIN_ARGS:-}
  cd "$runs/$stage"
  if [ -d adapter ]; then keep=adapter  # a LoRA stage: later stages continue its adapter, not the merged model
  else keep="model/*.json model/tokenizer.json"; split -b 15M model/model.safetensors "$out/$stage.safetensors.part-"; fi
  tar -cf "$out/$stage.tar" side_channel.json train_config.json train_log.jsonl loss.png $keep
  cd - >/dev/null
done
echo "[$SECONDS s] done"; ls -la "$out"
