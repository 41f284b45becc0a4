#!/usr/bin/env bash
# Every recall probe of a trained model (experiments/LOG.md, run V), each a JSON file in OUT_DIR, and a summary:
#   long, heldout            the suites' recall questions over the a2t cache, reference transcripts
#   long-runtime-kv          the same over the session whole under the runtime's eviction mask (as the loop holds it)
#   train-long               3 fresh long training sessions (seeds no run here draws)
#   seen, seen-swap(-shuffle) 3 long sessions the run itself trained on late (workers 0-2), as rendered, with facts
#                            renamed anew, and relaid too: a model that learnt where its sessions' answers lie, not
#                            how to find them, answers "seen" and not "train-long"
# Usage: experiments/probes/recall_probes.sh RUN_DIR OUT_DIR [WORKERS]   (RUN_DIR: a `ticktock train side-channel --out`;
#        WORKERS: the run's example workers, by default its --workers or, as the trainer does, this machine's cores
#        but one, so give it when probing elsewhere than where the run trained)
set -euo pipefail
run=${1:?run dir}; out=${2:?out dir}; workers=${3:-0}; model=$run/model
mkdir -p "$out"
# worker w's j-th long session is render_long of seed (100 * run seed + w) * 1_000_003 + long_reuse * j (a worker's
# seeds are (100 * seed + w) * 1_000_003 + i and it renders a long session every long_reuse long draws); j: two
# sessions before the last that the log's `made` reaches, so each was cut in full, late in training
seen=$(python3 - "$run" "$workers" <<'PY'
import json, os, sys
run, workers = sys.argv[1], int(sys.argv[2])
summary = json.load(open(f"{run}/side_channel.json"))
cfg, sc = summary["config"], summary["side_channel"]
made = [json.loads(line) for line in open(f"{run}/train_log.jsonl") if '"made"' in line][-1]["made"]
workers = workers or cfg["workers"] or max(1, (os.cpu_count() or 2) - 1)
j = max(0, int(made / workers * sc["long_share"] / sc["long_reuse"]) - 2)
print(",".join(str((100 * cfg["seed"] + w) * 1_000_003 + sc["long_reuse"] * j) for w in range(min(3, workers))))
PY
)
echo "seen sessions: $seen"
probe() { local name=$1; shift; python3 experiments/probes/recall_probe.py "$@" 2>/dev/null | tail -n1 > "$out/probe-$name.json"; }
probe long long "$model"
probe long-runtime-kv long "$model" --runtime-kv
probe heldout heldout "$model"
probe train-long train-long "$model" --n 3
probe seen train-long "$model" --seeds "$seen"
probe seen-swap train-long "$model" --seeds "$seen" --swap
probe seen-swap-shuffle train-long "$model" --seeds "$seen" --swap --shuffle
for name in long long-runtime-kv heldout train-long seen seen-swap seen-swap-shuffle; do
  python3 -c "import json; d = json.load(open('$out/probe-$name.json')); print(f\"$name: {round(d['exact'] * d['questions'])} of {d['questions']} exact, token acc {d['token_acc']}\")"
done
