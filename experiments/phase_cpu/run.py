"""Does hearing any chunk phase come from training on shifted sessions? A short CPU fine-tune of the shipped model.

The shipped model (stage M) misses slots of tool requests when a session's audio is shifted against the chunk grid
(`eval --phase-jitter`: tool 0.848 against 0.939 unshifted) while the default prompt alone costs nothing
(experiments/LOG.md). r1 and r2 trained with phase shifts among many other changes and did not move it. This probe
registers a data preset `espeak-phase` (the shipped data, `espeak`, with every session shifted by a random 0-1 s:
`TrainingData.phase_jitter`; no other change), continues M on it, then evaluates `heldout --phase-jitter` and
`heldout`. The GPU retraining is the real run; this asks whether the direction holds on a 2-core CPU. The replay
buffer is kept at 3,000 windows: at the preset's 40,000 this machine's 24 GiB would not hold it.

    python experiments/phase_cpu/run.py OUT SECONDS
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from cpu_probe import continue_on_cpu, evaluate  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

DATA_PRESETS["espeak-phase"] = TrainingData("espeak-phase", phase_jitter=True)

if __name__ == "__main__":
    out, seconds = sys.argv[1], sys.argv[2]
    continue_on_cpu(out, seconds, "espeak-phase", 22)
    for flags in (("--phase-jitter",), ()):
        print(json.dumps({"suite": " ".join(("heldout",) + flags), **evaluate(f"{out}/model", "heldout", *flags)}),
              flush=True)
