"""`ticktock eval --side-channel after_content` on a fresh sample of sessions instead of a fixed suite.

How the takeover samples before the `takeover` suite were measured (experiments/LOG.md): SEED draws new scripts,
SPLIT picks the voices (`heldout`, or `train` for the voices the model was trained on; the scripts differ too).
Usage: python experiments/probes/eval_sample.py SPLIT SEED N FAMILY[,FAMILY...] > OUT.json
"""

from __future__ import annotations

import argparse
import sys

from ticktock.commands import eval as eval_command
from ticktock.scenarios.suites import GENERATORS, SUITES, Suite

if len(sys.argv) != 5:
    raise SystemExit(__doc__)
split, seed, n, families = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), tuple(sys.argv[4].split(","))
if split not in ("train", "heldout") or set(families) - set(GENERATORS):
    raise SystemExit(f"SPLIT is train or heldout; families are {', '.join(GENERATORS)}")
NAME = f"sample-{split}-{seed}-{n}-{'-'.join(families)}"
# registered at import: the rendering processes import this file too and look the suite up by name
SUITES[NAME] = Suite(NAME, n, split, seed=seed, families=families)

if __name__ == "__main__":
    sub = argparse.ArgumentParser().add_subparsers()
    eval_command.add_parser(sub)  # `ticktock eval`'s own defaults; its --suite choices know no sample, so set after
    args = sub.choices["eval"].parse_args(["--side-channel", "after_content", "--workers", "2", "--json"])
    args.suite = NAME
    sys.exit(eval_command.run(args))
