"""Is a suite missed for its voices or for its words? The suite's scripts spoken in the training split's voices
(`SUITE-train-voices`, registered here as `heldout-festival-kdl` is in `scenarios/suites.py`), scored by
`answers.py` beside the suite as it is.

Usage: python experiments/probes/voice_gap.py SUITE [MODEL_DIR] [answers.py options]
e.g.   python experiments/probes/voice_gap.py phrasings --jsonl /tmp/train-voices.jsonl
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent)]

import answers  # noqa: E402
from ticktock.scenarios.suites import SUITES  # noqa: E402


def register(suite: str) -> str:
    """Register `suite`'s scripts in the training voices; returns the new suite's name."""
    name = f"{suite}-train-voices"
    SUITES[name] = replace(SUITES[suite], name=name, split="train", voiced_from=suite)
    return name


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    sys.argv[1] = register(sys.argv[1])
    answers.main()
