#!/usr/bin/env bash
# The figures a rebuilt side channel is held to, each beside the shipped pair's reference figure: decision
# agreement with its base on `heldout` (>= 0.98), transcript WER on 40 held-out sessions (<= 0.12), and recall on
# the `long` suite at a budget of 256 slots, `a2t` at least 20 points above `streaming_llm`. About 20 min on 2 cores.
#   scripts/side_channel_bars.sh MODEL BASE OUT
# MODEL: a side-channel model (`experiments/probes/stage_model.py RUNS/STAGE DIR --base BASE` makes one of a stage), or
# a base folder with the side channel beside it as DIR-side-channel/ (the merge's RUNS/side-channel/ beside a copy of
# BASE); BASE: the base it was fitted to. OUT gets agreement.json, wer.json, recall.json and bars.json.
set -euo pipefail
model=${1:?model}; base=${2:?base}; out=${3:?out}
mkdir -p "$out"
tt() { python -m ticktock.cli "$@"; }
tt eval --suite heldout --model "$model" --side-channel after_content --base "$base" --json --workers 2 >"$out/agreement.json"
tt memory --suite heldout --n 40 --policies none --clock cost --no-cascade --json --model "$model" >"$out/wer.json"
tt memory --suite long --policies none,streaming_llm,a2t --budget 256 --clock cost --no-cascade --workers 2 --json \
  --model "$model" >"$out/recall.json"
python - "$out" <<'PY'
import json, sys
from pathlib import Path

out, ref = Path(sys.argv[1]), Path("benchmarks/results/reference")
def last(p: Path) -> dict:  # a command's --json output ends with its JSON line; the reference files are whole JSON
    text = p.read_text().strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(text.splitlines()[-1])
def figures(agreement, wer, recall):
    r = recall["policies"]
    return {"agreement": agreement["decision_agreement_with_base"], "wer": wer["policies"]["none"]["wer"],
            "recall_a2t": r["a2t"]["recall_acc"], "recall_streaming_llm": r["streaming_llm"]["recall_acc"]}
got = figures(last(out / "agreement.json"), last(out / "wer.json"), last(out / "recall.json"))
shipped = figures(last(ref / "eval-heldout-side-channel/result.json"),
                  last(ref / "memory-heldout40-side-channel/result.json"), last(ref / "memory-long-cost/result.json"))
lead = lambda f: round(100 * (f["recall_a2t"] - f["recall_streaming_llm"]), 1)
bars = {"agreement >= 0.98": got["agreement"] >= 0.98, "wer <= 0.12": got["wer"] <= 0.12,
        "a2t recall >= streaming_llm + 20 points": lead(got) >= 20}
report = {"rebuilt": {**got, "recall_lead_points": lead(got)}, "shipped": {**shipped, "recall_lead_points": lead(shipped)},
          "bars": bars}
(out / "bars.json").write_text(json.dumps(report, indent=2))
print(json.dumps(report))
PY
