#!/usr/bin/env bash
# Pack an omni fine-tuning run's model for the way back from a device machine (at most 16 MiB a file):
# OUT/model.tar (config, protocol, tokenizer, the training log, heldout.json) and OUT/model.safetensors.part-*.
#   experiments/omni_finetune/pack.sh WORK OUT
# Here, put back together with
#   experiments/omni_finetune/pack.sh unpack FETCHED_DIR DEST     (-> DEST/model/, DEST/heldout.json, ...)
set -euo pipefail
if [ "${1:-}" = unpack ]; then
  got=${2:?fetched dir}; dest=${3:?dest}
  mkdir -p "$dest" && tar -xf "$got/model.tar" -C "$dest"
  cat "$got"/model.safetensors.part-* > "$dest/model/model.safetensors"
  echo "$dest: $(ls "$dest" | tr '\n' ' ')"; exit 0
fi
work=${1:?work dir}; out=${2:?out dir}
split -b 15M "$work/run/model/model.safetensors" "$out/model.safetensors.part-"
tar -cf "$out/model.tar" -C "$work" --exclude=model.safetensors run/model heldout.json run/train_log.jsonl \
  --transform 's|^run/||'
