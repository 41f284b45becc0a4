"""How well a model does arithmetic it hears: each "A plus|minus|times B is R" the script expects it to say,
counted right when the model's spoken text (closed loop, AR greedy, as `ticktock eval`) holds it exactly.

Arithmetic answers sit in short QA, long answers and paused requests; this reads every session of those families.
Usage: python experiments/probes/arithmetic_probe.py {quick|heldout|full} [MODEL_DIR]
"""

from __future__ import annotations

import re
import sys
from collections import Counter

import torch

from ticktock.bench.quality import normalize, run_session
from ticktock.runtime import load_runtime
from ticktock.scenarios.store import ensure_suite
from ticktock.scenarios.suites import load_session

FAMILIES = ("short_qa", "long_answer", "pause_handling")
FACT = re.compile(r"\d+ (plus|minus|times) \d+ is \d+")


def main(suite: str, model_dir: str | None = None) -> None:
    torch.set_grad_enabled(False)
    rt = load_runtime(model_dir)
    folder, entries = ensure_suite(suite)
    asked, right = Counter(), Counter()
    for e in entries:
        if e["family"] not in FAMILIES:
            continue
        _, audio = load_session(folder, e)
        outcome = run_session(rt.model, rt.protocol, e, audio, lambda call: None)
        want = normalize(" ".join(u["content"] for u in e["units"] if u["decision"] == "speak"))
        said = normalize(" ".join(r.text for r in outcome.units if r.decision == "speak"))
        for fact in FACT.finditer(want):
            asked[fact.group(1)] += 1
            right[fact.group(1)] += fact.group(0) in said
            if fact.group(0) not in said:
                print(f"{e['id']}: want {fact.group(0)!r}, said {said[:90]!r}")
    for op in sorted(asked):
        print(f"{op}: {right[op]}/{asked[op]}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
