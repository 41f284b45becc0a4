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
import subprocess
import sys

from ticktock.cli import main
from ticktock.train.data import DATA_PRESETS, TrainingData

DATA_PRESETS["espeak-phase"] = TrainingData("espeak-phase", phase_jitter=True)
KEYS = ("decision_acc", "qa_exact", "tool_exact", "pause_takeover", "backchannel_takeover", "turn_response_rate")


def evaluate(model: str, *flags: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "ticktock.cli", "eval", "--suite", "heldout", *flags, "--model", model,
                          "--json", "--workers", "2"], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


if __name__ == "__main__":
    out, seconds = sys.argv[1], sys.argv[2]
    main(["train", "base", "--config", "stage-m", "--init", "src/ticktock/assets/ticktock-tiny", "--out", out,
          "--set", "data=espeak-phase", "--set", "buffer=3000", "--time-budget", seconds, "--device", "cpu",
          "--workers", "1", "--batch", "16", "--lr", "2e-4", "--seed", "22", "--set", "warmup=20"])
    for flags in (("--phase-jitter",), ()):
        r = evaluate(f"{out}/model", *flags)
        print(json.dumps({"suite": " ".join(("heldout",) + flags), **{k: r[k] for k in KEYS}}), flush=True)
