"""Does transcribing shuffled words make the model hear words its templates do not predict? A short CPU probe.

`phrasings` misses coincide with mishearing: in transcription mode P2 hears "what day was yesterday" as "what day
is it in delhi" (WER 0.294 on the suite, M 0.461). Registers two data presets, both the shipped sessions through the
same renderer path, and continues the shipped model on each for SECONDS:
- `espeak-scrambled`: 15 % of the examples transcribe a session whose user says its words in a random order
  (`TrainingData.scrambled_share`, `scenarios.scrambled`);
- `espeak-unscrambled`: the control, the same with none scrambled.

    python experiments/listening_cpu/run.py train OUT SECONDS {espeak-scrambled|espeak-unscrambled}
    python experiments/listening_cpu/run.py wer MODEL [SUITE...]     # transcription WER per suite

The GPU retraining (experiments/retraining-plan.md) is the real test; this asks only whether the direction shows
on what a 2-core CPU trains in minutes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parents[1] / "probes")]

from cpu_probe import continue_on_cpu  # noqa: E402
from listen_probe import main as listen  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

DATA_PRESETS["espeak-unscrambled"] = TrainingData("espeak-unscrambled")

if __name__ == "__main__":
    what = sys.argv[1]
    if what == "train":
        out, seconds, data = sys.argv[2:5]
        continue_on_cpu(out, seconds, data, 31)
    elif what == "wer":
        model, suites = sys.argv[2], sys.argv[3:] or ["phrasings", "heldout"]
        for suite in suites:
            wer = listen(model, f"suite:{suite}", 200, quiet=True)
            print(json.dumps({"model": model, "suite": suite, "wer": round(wer, 3)}), flush=True)
    else:
        raise SystemExit(f"unknown step {what!r}: train or wer")
