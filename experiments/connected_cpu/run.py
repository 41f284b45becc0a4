"""Does hearing connected speech come from training on it? A short CPU fine-tune of the shipped model.

Registers a data preset `espeak-connected` (the shipped data, `espeak`, with half the sessions said in one go:
`TrainingData.connected_share`; no other change) and continues stage M on it, then evaluates `heldout` (word by
word) and `heldout-connected` (the same sessions said in one go). The GPU retraining (experiments/retraining-plan.md)
is the real run; this only asks whether the direction holds on what a 2-core CPU can do in an hour.

    python experiments/connected_cpu/run.py OUT SECONDS
"""

from __future__ import annotations

import json
import subprocess
import sys

from ticktock.cli import main
from ticktock.train.data import DATA_PRESETS, TrainingData

DATA_PRESETS["espeak-connected"] = TrainingData("espeak-connected", connected_share=0.5)


def evaluate(model: str, suite: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "ticktock.cli", "eval", "--suite", suite, "--model", model,
                          "--json", "--workers", "2"], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


if __name__ == "__main__":
    out, seconds = sys.argv[1], sys.argv[2]
    main(["train", "base", "--config", "stage-m", "--init", "src/ticktock/assets/ticktock-tiny", "--out", out,
          "--set", "data=espeak-connected", "--time-budget", seconds, "--device", "cpu", "--workers", "1",
          "--batch", "16", "--lr", "2e-4", "--seed", "21", "--set", "warmup=20"])
    for suite in ("heldout-connected", "heldout"):
        r = evaluate(f"{out}/model", suite)
        keys = ("decision_acc", "qa_exact", "tool_exact", "pause_takeover", "backchannel_takeover", "turn_response_rate")
        print(json.dumps({"suite": suite, **{k: r[k] for k in keys}}), flush=True)
