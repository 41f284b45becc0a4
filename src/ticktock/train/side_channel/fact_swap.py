"""Fact swap: new facts in a memory example's evicted text, so a recall answer must be read, not remembered.

Rendering a session takes seconds, so the trainer's workers and replay buffer show each rendered session
many times; a recall answer seen a few times is learnt by heart (training recall accuracy near 1.0 within a
few hundred steps, held-out recall unchanged). In a memory example the units older than the retention
window are text only — their audio is gone — so their facts can be changed without rendering anything: one
consistent renaming of groceries, names and days (and of a code's digits) through the evicted transcripts
and replies and through the retained units' outputs. Every word the retained units' own transcripts hold
stays as it is (their audio says it: "at what time do i meet victor?"), so the example stays true to what
is heard, and the answer changes with the facts it asks about. A renamed example replayed many times can still
be learnt by heart: it pays where examples are cut faster than they are drawn (the `long` source's `reuse`;
experiments/LOG.md, recall runs W, X, Y).
"""

from __future__ import annotations

import random
import re
from dataclasses import replace

from ...scenarios.intents.memo import GROCERIES
from ...scenarios.intents.reasoning import NAMES
from ...scenarios.text import ONES
from ...scenarios.world import DAYS
from ..examples import UnitSpec

CLASSES = (tuple(GROCERIES), tuple(NAMES), tuple(DAYS))  # words swapped within their own class
DIGIT_WORDS = ONES[:10]  # zero ... nine: how a code is spoken
_WORD = re.compile(r"[a-z]+|\d+|[^a-z\d]+")
_CODE = re.compile(r"\d( \d){2,}")  # a code's answer: "2 6 0 7"


def _renaming(rng: random.Random, fixed: set[str], digits: bool) -> dict[str, str]:
    """A random permutation within each class, leaving `fixed` words in place; digits too if asked."""
    table: dict[str, str] = {}
    classes = [*CLASSES, DIGIT_WORDS] if digits else CLASSES
    for cls in classes:
        free = [w for w in cls if w not in fixed]
        table.update(zip(free, rng.sample(free, len(free))))
    if digits:  # a code's answer writes the digits as numerals
        table.update({str(d): str(DIGIT_WORDS.index(table.get(w, w))) for d, w in enumerate(DIGIT_WORDS)})
    return table


def _rename(text: str, table: dict[str, str]) -> str:
    return "".join(table.get(t, t) for t in _WORD.findall(text))


def swap_facts(units: list[UnitSpec], words: list[str], r0: int, u1: int,
               rng: random.Random) -> tuple[list[UnitSpec], list[str]]:
    """Units and per-unit transcript words with the facts of the window's text renamed.

    The window is units [0, u1); [r0, u1) are retained whole (their transcripts are kept). Digits are renamed
    only when every number the retained outputs write is a code's digits ("2 6 0 7"): a count ("there are
    5 items") or a room ("room 40") is not a renaming of spoken digits.
    """
    fixed = {t for w in words[r0:u1] for t in _WORD.findall(w)}
    outputs = " ".join(u.content for u in units[r0:u1])
    numbers = re.sub(_CODE, "", outputs)
    digits = bool(_CODE.search(outputs)) and not re.search(r"\d", numbers)
    table = _renaming(rng, fixed, digits)
    new_units = [replace(u, content=_rename(u.content, table)) if k < u1 else u for k, u in enumerate(units)]
    new_words = [_rename(w, table) if k < r0 else w for k, w in enumerate(words)]
    return new_units, new_words


__all__ = ["CLASSES", "swap_facts"]
