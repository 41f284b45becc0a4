#!/usr/bin/env bash
# The paper's table on one GPU, wall clock, on the 8B-cost expansion of ticktock-tiny (issue: real GPU sessions).
# On a GPU machine without package access (carry .gpu-espeak/, .whl/ and .whl-bench/; see scripts/gpu_env.sh). Usage:
#   scripts/gpu_table_8b.sh WORK STEP...      (results under WORK/, one folder per step; rerun a step to resume)
# steps: check    every GPU test (fast engine == eager, sessions on the fast engine, the graphed audio front)
#        expand   the minicpm-o-4.5-lm expansion in bf16 (WORK/tt8b) and its calibrated profile
#        main     ar + sl over the stratified sample of the full suite (SAMPLE sessions, default 240), in PARTS
#                 pieces (default 2; ONLY_PART=k runs only piece k)
#        base     pld, tr, lookahead, sl-silence, sl-runnerup (and ar again) on the sample (SAMPLE=60 PARTS=1
#                 fits one device call)
#        profile  the expansion's calibrated forward-time profile (for the cost-clock projection)
#        fp32     ar + sl in fp32 on 20 of the sessions (token identity)
#        n4 / t1  ar + sl with 4 sessions sharing the GPU / at temperature 1
#        memory   none vs a2t on MEMORY_N (default 3) long sessions
set -euo pipefail
work=${1:?work dir}; shift
source scripts/gpu_env.sh
mkdir -p "$work" runs
model=$work/tt8b; sample=${SAMPLE:-240}; parts=${PARTS:-2}
common=(--suite full --sample "$sample" --clock wall --device cuda --engine fast --model "$model" --no-plots --json)
bench() { name=$1; shift
  python3 -m ticktock.cli data make --suite full --workers 16 >/dev/null 2>&1  # rendered once, in parallel
  for k in ${ONLY_PART:-$(seq 1 "$parts")}; do
    out=$work/$name-p$k; [ -f "$out/summary.json" ] && continue
    echo "$(date +%T) $name part $k/$parts" >&2
    python3 -m ticktock.cli bench "${common[@]}" --part "$k/$parts" --out "$out" "$@" 2>"$out.log" | tail -1 | tee -a "$work/$name.jsonl"
    gzip -kf "$out/units.jsonl"  # what comes back from the machine: a few MB plain is too much for one file
  done; }
for step in "$@"; do
  case $step in
    check) timeout "${CHECK_LIMIT:-300}" python3 -m pytest -q -p no:cacheprovider -m gpu tests >"$work/gpu_tests.log" 2>&1 || true; tail -3 "$work/gpu_tests.log" ;;
    expand) [ -f "$model/config.json" ] || python3 -m ticktock.cli model expand --shape minicpm-o-4.5-lm --out "$model" \
              --device cuda --dtype bfloat16
            ;;
    profile) python3 -m ticktock.cli calibrate --model "$model" --device cuda --fast --out "$work/h200-tt8b-bf16.json" \
              --json 2>"$work/calibrate.log" | tail -1 ;;
    main) bench main --decoders sl --dtype bfloat16 ;;
    base) bench base --decoders pld,tr,lookahead,sl-silence,sl-runnerup --dtype bfloat16 ;;
    fp32) ONLY_PART=1 parts=1 bench fp32 --decoders sl --dtype float32 --part 1/12 ;;  # the first 20 of the sample
    n4) bench n4 --decoders sl --dtype bfloat16 --sessions 4 ;;
    t1) bench t1 --decoders sl --dtype bfloat16 --temperature 1 ;;
    memory) python3 -m ticktock.cli memory --suite long --n "${MEMORY_N:-3}" --policies none,a2t --clock wall --device cuda \
              --engine fast --dtype bfloat16 --model "$model" --decoder sl --no-cascade --json 2>"$work/memory.log" \
              | tail -1 | tee "$work/memory.json" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
