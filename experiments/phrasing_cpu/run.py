"""Do composed requests teach a user's own words? A short CPU fine-tune of the shipped model.

Registers a data preset `espeak-phrasings` (the shipped data, `espeak`, with `fresh_phrasings` on: the listed
templates and more, half the requests composed from parts (`intents.shapes`), framed, fillers, values said in
other words; no other change) and a suite `phrasings-blind` (`blind.py`: 48 requests written without sight of
the templates, the composed shapes or the `phrasings` suite), then:

    python experiments/phrasing_cpu/run.py train OUT SECONDS [DATA]  # continue stage M for SECONDS on the CPU
    python experiments/phrasing_cpu/run.py eval MODEL [SUITE...] # one JSON line per suite (phrasings, blind, heldout)

DATA is `espeak-phrasings` or the control `espeak-phrasings-listed` (the same with no request composed). The
replay buffer is 3,000 windows: the preset's 40,000 outgrows this machine's 24 GiB.

The GPU retraining (experiments/retraining-plan.md) is the real run; this asks whether the direction holds on
what a 2-core CPU does in under an hour.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
from dataclasses import replace
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from blind import BLIND  # noqa: E402
from cpu_probe import KEYS, continue_on_cpu  # noqa: E402
from ticktock.cli import build_parser  # noqa: E402
from ticktock.scenarios.phrasings import request_script  # noqa: E402
from ticktock.scenarios.script import Script  # noqa: E402
from ticktock.scenarios.suites import SUITES  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

DATA_PRESETS["espeak-phrasings"] = TrainingData("espeak-phrasings", fresh_phrasings=True)
# the control: the same fresh phrasings with no request composed (listed templates, framing, fillers, values)
DATA_PRESETS["espeak-phrasings-listed"] = TrainingData("espeak-phrasings-listed", fresh_phrasings=True,
                                                       composed_share=0.0)


def blind_script(i: int, rng: random.Random) -> Script:
    return request_script(rng, *BLIND[i])


SUITES["phrasings-blind"] = replace(SUITES["phrasings"], name="phrasings-blind", n=len(BLIND), seed=7117,
                                    scripts=blind_script)


def evaluate(model: str, suite: str) -> dict:
    """`ticktock eval --suite SUITE --model MODEL --json` here (the blind suite exists in this process only)."""
    args = build_parser().parse_args(["eval", "--model", model, "--json", "--workers", "1"])
    args.suite = suite  # past the parser's list of the product's suites
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        args.func(args)
    r = json.loads(buf.getvalue().strip().splitlines()[-1])
    return {"suite": suite, "model": model, **{k: r.get(k) for k in KEYS}}


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "train":
        out, seconds, data = sys.argv[2], sys.argv[3], (sys.argv[4:] or ["espeak-phrasings"])[0]
        continue_on_cpu(out, seconds, data, 23)
    elif what == "eval":
        model, suites = sys.argv[2], sys.argv[3:] or ["phrasings", "phrasings-blind", "heldout"]
        for suite in suites:
            print(json.dumps(evaluate(model, suite)), flush=True)
    else:
        raise SystemExit(f"unknown step {what!r}: train or eval")
