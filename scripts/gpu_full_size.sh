#!/usr/bin/env bash
# The full-size shapes on one GPU (docs/models.md "Full size on one GPU"): for each shape its `ticktock calibrate`
# profile, a 12-unit session through DuplexSession on the fast engine, and the 1-token forward per attention
# kernel against the bandwidth floor. On a GPU machine without package access (carry .whl/ and .gpu-espeak/; see
# scripts/gpu_env.sh):
#   scripts/gpu_full_size.sh OUT [BANDWIDTH]     (BANDWIDTH in bytes/s, default 4.3e12: the H200's usable HBM;
#                                                 3.0e12 on an H100, its 3.35 TB/s scaled alike)
# Names follow the card (h200, h100, ...): OUT/CARD-SHAPE-bf16.json (commit under benchmarks/profiles/) and
# OUT/CARD-full-size.tar: session-SHAPE.{json,log}, kernels-SHAPE.{json,log}, calibrate-SHAPE.log
# (benchmarks/results/reference/CARD-full-size-sessions/). Two profiles and one tar: a device call returns 8 files.
# SESSIONS_ONLY=1 runs only the sessions, against the card's committed profiles in benchmarks/profiles/.
set -euo pipefail
out=${1:?out dir}; bandwidth=${2:-4.3e12}
source scripts/gpu_env.sh
mkdir -p "$out/work"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
card=$(echo "$gpu" | grep -oiE 'h100|h200|a100|l40s|b200' | head -1 | tr 'A-Z' 'a-z'); card=${card:-gpu}
for shape in qwen2.5-omni-7b-thinker minicpm-o-4.5; do
  profile=benchmarks/profiles/$card-$shape-bf16.json  # the committed one, for SESSIONS_ONLY
  if [ -z "${SESSIONS_ONLY:-}" ]; then
    profile=$out/$card-$shape-bf16.json
    python3 -m ticktock.cli calibrate --shape "$shape" --device cuda --out "$profile" --json > "$out/work/calibrate-$shape.log" 2>&1
  fi
  python3 scripts/full_size_session.py --shape "$shape" --device cuda --engine fast --profile "$profile" --bandwidth "$bandwidth" \
    --json "$out/work/session-$shape.json" > "$out/work/session-$shape.log" 2>&1
  tail -4 "$out/work/session-$shape.log"
  if [ -z "${SESSIONS_ONLY:-}" ]; then
    python3 experiments/fastpath_profile/one_token_kernels.py --shape "$shape" --bandwidth "$bandwidth" \
      --json "$out/work/kernels-$shape.json" > "$out/work/kernels-$shape.log" 2>&1
    cat "$out/work/kernels-$shape.log"
  fi
done
tar -C "$out/work" -cf "$out/$card-full-size.tar" . && rm -r "$out/work"
