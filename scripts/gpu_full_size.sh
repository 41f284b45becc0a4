#!/usr/bin/env bash
# The full-size shapes on one GPU (docs/models.md "Full size on one H200"): for each shape its `ticktock calibrate`
# profile, a 12-unit session through DuplexSession on the fast engine, and the 1-token forward per attention
# kernel against the bandwidth floor. On a GPU machine without package access (carry .whl/; see scripts/gpu_env.sh):
#   scripts/gpu_full_size.sh OUT [BANDWIDTH]     (BANDWIDTH in bytes/s, default 4.3e12: the H200's usable HBM)
# Writes OUT/h200-SHAPE-bf16.json (commit under benchmarks/profiles/), OUT/session-SHAPE.{json,log} and
# OUT/kernels-SHAPE.{json,log} (benchmarks/results/reference/h200-full-size-sessions/).
set -euo pipefail
out=${1:?out dir}; bandwidth=${2:-4.3e12}
source scripts/gpu_env.sh
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader
for shape in qwen2.5-omni-7b-thinker minicpm-o-4.5; do
  profile=$out/h200-$shape-bf16.json
  python3 -m ticktock.cli calibrate --shape "$shape" --device cuda --out "$profile" --json > "$out/calibrate-$shape.log" 2>&1
  python3 scripts/full_size_session.py --shape "$shape" --device cuda --engine fast --profile "$profile" --bandwidth "$bandwidth" \
    --json "$out/session-$shape.json" > "$out/session-$shape.log" 2>&1
  python3 experiments/fastpath_profile/one_token_kernels.py --shape "$shape" --bandwidth "$bandwidth" \
    --json "$out/kernels-$shape.json" > "$out/kernels-$shape.log" 2>&1
  tail -4 "$out/session-$shape.log"; cat "$out/kernels-$shape.log"
done
