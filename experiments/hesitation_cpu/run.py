"""Does a reply started late teach the model to answer after it hesitated? A short CPU probe of
`TrainingData.hesitate_share` (`train.hesitation`).

Registers `espeak-hesitate`: the shipped sessions with fresh phrasings (reading_cpu's control, `espeak-heard`) and
30 % of the dialogue sessions with one reply started a unit late after an unlearnt `listen`; continues the shipped
model (P2) on it for SECONDS, as reading_cpu's runs did (stage M's recipe, batch 16, lr 2e-4, seed SEED):

    python experiments/hesitation_cpu/run.py train OUT SECONDS SEED
    python experiments/phrasing_cpu/run.py eval MODEL phrasings heldout          # the measure
    python experiments/probes/decision_margins.py MODEL phrasings --ids 4,34,35  # where replies were not started

Its control is reading_cpu's `espeak-heard` run (the same data without hesitations, seed 41, recorded there).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parents[1])]

from cpu_probe import continue_on_cpu  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

DATA_PRESETS["espeak-hesitate"] = TrainingData("espeak-hesitate", fresh_phrasings=True, hesitate_share=0.3)

if __name__ == "__main__":
    what = sys.argv[1]
    if what == "train":
        out, seconds, seed = sys.argv[2:]
        continue_on_cpu(out, seconds, "espeak-hesitate", int(seed))
    else:
        raise SystemExit(f"unknown step {what!r}: train")
