#!/usr/bin/env bash
# Score one retraining stage on this CPU the way every stage is scored (experiments/retraining-plan.md), and append
# one line per suite to results/evals.jsonl:
#   experiments/retraining/evaluate.sh NAME MODEL_DIR [WORKERS]
# Suites: phrasings, phrasings-blind (experiments/phrasing_cpu/blind.py), heldout, heldout with phase jitter and the
# live default prompt (the line named heldout-jitter), heldout-connected. About 5 minutes with 2 workers.
set -euo pipefail
name=${1:?stage name}; model=${2:?model dir}; workers=${3:-2}
here=$(dirname "$0"); log=$here/results/evals.jsonl; tmp=$(mktemp -d)
trap 'rc=$?; [ $rc = 0 ] || { tail -20 "$tmp/err" >&2 2>/dev/null || true; }; exit $rc' EXIT  # the tables and progress go to $tmp/err
[ -f "$model/config.json" ] || [ ! -f "$model/model/config.json" ] || model=$model/model  # a stage's OUT dir
[ -f "$model/config.json" ] || { echo "no config.json in $model (rebuild it: cat model.safetensors.part-* > model.safetensors)" >&2; exit 2; }

record() {  # record LABEL FILE: the eval's JSON (the blind run's last line) as one line named after the stage
  python3 - "$name" "$1" "$2" >> "$log" <<'EOF'
import json, sys
name, label, path = sys.argv[1:]
d = json.load(open(path))
d.pop("model", None); d.pop("suite", None)
print(json.dumps({"model": name, "suite": label, **d}))
EOF
  tail -1 "$log" | cut -c1-220
}

score() {  # score LABEL EVAL_ARGS...: one `ticktock eval` of the model, recorded as LABEL
  local label=$1; shift
  ticktock eval "$@" --model "$model" --json --workers "$workers" 2>>"$tmp/err" > "$tmp/$label.json"
  record "$label" "$tmp/$label.json"
}

score phrasings --suite phrasings
python3 "$here/../phrasing_cpu/run.py" eval "$model" phrasings-blind 2>>"$tmp/err" | tail -1 > "$tmp/b.json"; record phrasings-blind "$tmp/b.json"
score heldout --suite heldout
score heldout-jitter --suite heldout --phase-jitter --system-prompt default
score heldout-connected --suite heldout-connected
rm -rf "$tmp"; trap - EXIT
