#!/usr/bin/env bash
# Many live sessions on one GPU, in real time: the 8B-cost expansion of ticktock-tiny, ar and sl, N sessions at once
# (docs/scaling.md). On a GPU machine without package access (carry .gpu-espeak/, .whl/ and .whl-bench/; see scripts/gpu_env.sh).
#   scripts/gpu_live_sweep.sh WORK setup                      the bf16 expansion (WORK/tt8b) and the live suite
#   scripts/gpu_live_sweep.sh WORK run NAME MODE NS SECONDS   bench --live MODE --sessions NS (e.g. 1,4,8) with each
#                                                             session's first SECONDS of audio -> WORK/NAME/
#   scripts/gpu_live_sweep.sh WORK pack NAME OUT               WORK/NAME (units gzipped), its JSON line and log as
#                                                             OUT/NAME.tgz, one file for the way back
#   scripts/gpu_live_sweep.sh WORK rounds N SECONDS           where a live round's time goes at N sessions: its
#                                                             forwards vs host work (-> WORK/rounds-N.log)
#   scripts/gpu_live_sweep.sh WORK check                      every GPU test (-> WORK/gpu_tests.log) and the cost of a
#                                                             round of B sessions batched vs one by one (-> WORK/check.log)
set -euo pipefail
work=${1:?work dir}; step=${2:?step}
source scripts/gpu_env.sh
mkdir -p "$work"
model=$work/tt8b
case $step in
  setup)
    [ -f "$model/config.json" ] || python3 -m ticktock.cli model expand --shape minicpm-o-4.5-lm --out "$model" \
      --device cuda --dtype bfloat16 >"$work/expand.log" 2>&1
    python3 -m ticktock.cli data make --suite live --workers 16 >"$work/data.log" 2>&1 ;;
  run)
    name=${3:?name}; mode=${4:?mode}; ns=${5:?sessions}; seconds=${6:?seconds}
    python3 -m ticktock.cli bench --suite live --seconds "$seconds" --sessions "$ns" --live "$mode" --decoders sl \
      --clock wall --device cuda --engine fast --dtype bfloat16 --model "$model" --out "$work/$name" --json \
      2>"$work/$name.log" | tail -1 | tee "$work/$name.json"
    gzip -kf "$work/$name"/units*.jsonl ;;  # what comes back from the machine
  pack)
    name=${3:?name}; out=${4:?out dir}
    tar czf "$out/$name.tgz" -C "$work" --exclude='units*.jsonl' "$name" "$name.json" "$name.log" ;;
  check)
    { python3 -m pytest -q -p no:cacheprovider -m gpu tests >"$work/gpu_tests.log" 2>&1 || true
      tail -5 "$work/gpu_tests.log"
      python3 experiments/probes/sdpa_shape_churn.py
      python3 experiments/probes/batched_round_cost.py --model "$model" --device cuda --dtype bfloat16 --engine fast \
        --resident 1024; } 2>&1 | grep -v WARNING | tee "$work/check.log" ;;
  rounds)
    n=${3:?sessions}; seconds=${4:?seconds}
    python3 experiments/probes/live_round_cost.py --model "$model" --device cuda --dtype bfloat16 --engine fast \
      --sessions "$n" --seconds "$seconds" 2>&1 | grep -v WARNING | tee "$work/rounds-$n.log" ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
