"""Does hearing connected speech come from training on it? A short CPU fine-tune of the shipped model.

Registers a data preset `espeak-connected` (the shipped data, `espeak`, with half the sessions said in one go:
`TrainingData.connected_share`; no other change) and continues stage M on it, then evaluates `heldout` (word by
word) and `heldout-connected` (the same sessions said in one go). The GPU retraining (experiments/retraining-plan.md)
is the real run; this only asks whether the direction holds on what a 2-core CPU can do in an hour.

    python experiments/connected_cpu/run.py OUT SECONDS
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from cpu_probe import continue_on_cpu, evaluate  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

DATA_PRESETS["espeak-connected"] = TrainingData("espeak-connected", connected_share=0.5)

if __name__ == "__main__":
    out, seconds = sys.argv[1], sys.argv[2]
    continue_on_cpu(out, seconds, "espeak-connected", 21, buffer=None)
    for suite in ("heldout-connected", "heldout"):
        print(json.dumps({"suite": suite, **evaluate(f"{out}/model", suite)}), flush=True)
