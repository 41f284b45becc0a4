"""Do requests read as text teach the same requests heard? A short CPU probe of `TrainingData.read_share`.

Registers two data presets, both the shipped sessions with fresh phrasings through the same renderer path, and
continues the shipped model (P2) on each for SECONDS:
- `espeak-read`: 30 % of the examples are windows of requests read as text over silence (`train.read_requests`);
- `espeak-heard`: the control, the same with none read.

    python experiments/reading_cpu/run.py train OUT SECONDS {espeak-read|espeak-heard}
    python experiments/phrasing_cpu/run.py eval MODEL phrasings phrasings-blind heldout   # the measure

The GPU stage (experiments/retraining-plan.md, data `multi-engine-read`) is the real test; a few hundred CPU steps
show whether the pipeline learns and which way the heard suites move, not a significant difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parents[1])]

from cpu_probe import continue_on_cpu  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

DATA_PRESETS["espeak-read"] = TrainingData("espeak-read", fresh_phrasings=True, read_share=0.3)
DATA_PRESETS["espeak-heard"] = TrainingData("espeak-heard", fresh_phrasings=True)

if __name__ == "__main__":
    what = sys.argv[1]
    if what == "train":
        out, seconds, data = sys.argv[2:5]
        continue_on_cpu(out, seconds, data, 41)
    else:
        raise SystemExit(f"unknown step {what!r}: train")
