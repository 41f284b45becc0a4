"""What the short CPU probes (`*_cpu/run.py`) share: stage M's recipe continued on this 2-core CPU with a data
preset the probe registers, and `ticktock eval`'s headline figures read back.

The settings are the ones every probe's recorded results ran with: batch 16, lr 2e-4, warm-up 20 steps, one
rendering worker, and a replay buffer of 3,000 windows (the recipe's 40,000 outgrows this machine's 24 GiB; the
connected-speech probe ran with the recipe's).
"""

from __future__ import annotations

import json
import subprocess
import sys

from ticktock.cli import main
from ticktock.train.data import DATA_PRESETS, TrainingData

SHIPPED = "src/ticktock/assets/ticktock-tiny"
# listening_cpu's preset, which deeper_cpu trains on too: a user who says its words in a random order
DATA_PRESETS["espeak-scrambled"] = TrainingData("espeak-scrambled", scrambled_share=0.15)
KEYS = ("decision_acc", "qa_exact", "tool_exact", "pause_takeover", "backchannel_takeover", "turn_response_rate")


def continue_on_cpu(out: str, seconds: str, data: str, seed: int, *, init: str = SHIPPED,
                    buffer: int | None = 3000, extra: tuple[str, ...] = ()) -> None:
    """`ticktock train base --config stage-m` from `init` for `seconds` on data preset `data`, into `out`; `extra`:
    more `train base` arguments (e.g. `--set KEY=VALUE`)."""
    kept = ["--set", f"buffer={buffer}"] if buffer else []
    main(["train", "base", "--config", "stage-m", "--init", init, "--out", out, "--set", f"data={data}", *kept,
          "--time-budget", seconds, "--device", "cpu", "--workers", "1", "--batch", "16", "--lr", "2e-4",
          "--seed", str(seed), "--set", "warmup=20", *extra])


def evaluate(model: str, suite: str, *flags: str) -> dict:
    """`ticktock eval --suite SUITE FLAGS --model MODEL --json`'s headline figures (in a child process)."""
    out = subprocess.run([sys.executable, "-m", "ticktock.cli", "eval", "--suite", suite, *flags, "--model", model,
                          "--json", "--workers", "2"], capture_output=True, text=True, check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {k: r[k] for k in KEYS}
