#!/usr/bin/env bash
# The full-suite benchmark runs of benchmarks/README.md, on a GPU machine without package access
# (needs .gpu-espeak/ and .whl/ carried; see scripts/gpu_env.sh). Usage:
#   scripts/gpu_bench_full.sh OUT WORKERS STEP...
# steps: main   cost clock (H200 7B profile), every decoder and the ablation, N = 1, greedy
#        gpu    the shipped model's wall clock on the GPU(s), ar vs sl, $GPU_WORKERS processes (default 1),
#               spread over the GPUs, in the background (its log shows the contention it ran under)
#        t1     cost clock, ar vs sl, T = 1 (sampling)
#        n4     cost clock, ar vs sl, N = 4 sessions sharing the device
#        sweep  cost clock, ar vs sl, T = 0,1 and N = 1,4 in one results folder (Figs. 4b, 4c)
#        cpu    the shipped model's wall clock on CPU cores, ar vs sl, 1 thread per worker
set -euo pipefail
out=${1:?out dir}; workers=${2:?workers}; shift 2
source scripts/gpu_env.sh
mkdir -p "$out"
python3 -m ticktock.cli data make --suite full --workers "$workers" > "$out/render.log" 2>&1
bench() { name=$1; shift; python3 -m ticktock.cli bench --suite full --out "runs/$name" --json "$@" > "$out/$name.log" 2>&1
          gzip -f "runs/$name/units.jsonl"; tar czf "$out/$name.tgz" -C runs "$name"; tail -1 "$out/$name.log"; }
pids=()
for step in "$@"; do
  case $step in
    gpu) bench full-wall-gpu --decoders sl --clock wall --device cuda --workers "${GPU_WORKERS:-1}" --no-plots &
         pids+=($!) ;;
    t1) bench full-t1 --decoders sl --clock cost --temperature 1 --workers "$workers" ;;
    n4) bench full-n4 --decoders sl --clock cost --sessions 4 --workers "$workers" ;;
    main) bench full-cost --decoders pld,tr,lookahead,sl-silence,sl-runnerup,sl --clock cost --workers "$workers" ;;
    sweep) bench full-sweep --decoders sl --clock cost --temperature 0,1 --sessions 1,4 --workers "$workers" ;;
    cpu) bench full-wall-cpu --decoders sl --clock wall --workers 8 --no-plots ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
for p in "${pids[@]}"; do wait "$p"; done
ls -la "$out"
