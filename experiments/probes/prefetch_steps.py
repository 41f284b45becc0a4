"""Training steps a second with and without the trainer's batch prefetch (`TrainConfig.prefetch`), on one stage of
the shipped side-channel recipe for SECONDS each (default stage l: LoRA, long sessions, the heaviest batches).
The rate is read past the first third of each run (the replay buffer filling, the first kernels compiling).
Usage: python experiments/probes/prefetch_steps.py SECONDS OUT [STAGE] [--workers N]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from ticktock.train.side_channel import load_config
from ticktock.train.side_channel.recipe import Recipe
from ticktock.train.side_channel.run import train_side_channel


def rate(log: list[dict], seconds: float) -> float:
    """Steps a second between the first logged step past seconds / 3 and the last."""
    steps = [r for r in log if "loss" in r]
    first = next((r for r in steps if r["seconds"] >= seconds / 3), steps[0])
    last = steps[-1]
    return (last["step"] - first["step"]) / max(last["seconds"] - first["seconds"], 1e-9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seconds", type=float)
    ap.add_argument("out", type=Path)
    ap.add_argument("stage", nargs="?", default="l")
    ap.add_argument("--workers", type=int, default=14)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    recipe = load_config("shipped").stage(args.stage).recipe
    plain = Recipe.train_config
    for prefetch in (False, True):
        Recipe.train_config = lambda self, *a, p=prefetch: replace(plain(self, *a), prefetch=p)
        log = train_side_channel(args.out / f"prefetch-{prefetch}", recipe, None, None, args.device, args.seconds,
                                 args.workers, log_every=10)
        print(json.dumps({"stage": args.stage, "prefetch": prefetch, "steps_per_s": round(rate(log, args.seconds), 3),
                          "steps": log[-1]["step"]}), flush=True)
    Recipe.train_config = plain


if __name__ == "__main__":
    main()
