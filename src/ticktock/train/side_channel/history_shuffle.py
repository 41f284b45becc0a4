"""History shuffle: another layout of a memory example's evicted text, so a recall answer must be found, not located.

Run V (experiments/LOG.md) read renamed facts off its transcripts in the long sessions it was trained
on (10 of 13 answers) and not in fresh ones (2 of 14): every rendered long session was cut ~50 times per recall
question, and where each answer lies in that session was learnt while fact swap renamed what lies there. Rendering
more sessions costs seconds each; relaying the text costs nothing. A session's evicted stretch is a run of
exchanges (units with words, an output or a tool result) separated by quiet units:

- an exchange holding a word of one of the session's recall answers (a number also as spoken, whole or digit by
  digit: "room 40" is said "room forty", a code "four zero") stays, in order;
- one holding another fact word (a grocery, name, weekday, number word or digit) keeps its place in that order or
  is dropped (probability `drop`): dropping an older list never changes which list is "the newer one", moving it
  could;
- the rest (small talk, questions about countries) are dropped with the same probability, and what is left of
  them is interleaved among the ordered ones at random.

The exchange that runs into the retained window stays last, where it was.
"""

from __future__ import annotations

import random
import re

from ...protocol import Decision
from ...scenarios.text import ONES, TENS, digits_words, number_words
from ..examples import UnitSpec
from .fact_swap import CLASSES

FACT_WORDS = frozenset(w for cls in CLASSES for w in cls) | frozenset(ONES) | frozenset(TENS[2:]) | {"hundred",
                                                                                                     "thousand"}
_TOKEN = re.compile(r"[a-z]+|\d")
_NUMBER = re.compile(r"\d+")


def _quiet(unit: UnitSpec, words: str) -> bool:
    return not words and not unit.content and unit.tool_result is None and unit.decision == Decision.LISTEN


def exchanges(units: list[UnitSpec], words: list[str], r0: int) -> list[list[int]]:
    """Units [0, r0) as consecutive groups: each exchange with the quiet units after it (a leading quiet stretch
    is a group of its own)."""
    groups: list[list[int]] = []
    for k in range(r0):
        if not groups or (not _quiet(units[k], words[k]) and _quiet(units[k - 1], words[k - 1])):
            groups.append([])
        groups[-1].append(k)
    return groups


def exchange_text(units: list[UnitSpec], words: list[str], group: list[int]) -> list[str]:
    """The words and digits of an exchange's transcripts, outputs and tool results."""
    text = " ".join(f"{words[k]} {units[k].content} {units[k].tool_result or ''}" for k in group).lower()
    return _TOKEN.findall(text)


def answer_words(units: list[UnitSpec]) -> set[str]:
    """The fact words of a session's recall answers; a number also as its digits and as spoken, whole and digit
    by digit."""
    out = set()
    for u in units:
        if not u.recall:
            continue
        text = u.content.lower()
        out |= {t for t in _TOKEN.findall(text) if t in FACT_WORDS}
        for num in _NUMBER.findall(text):
            out |= set(num) | set(digits_words(num).split())
            if int(num) < 10000:
                out |= set(number_words(int(num)).split()) - {"hundred", "thousand"}
    return out


def shuffled_history(units: list[UnitSpec], words: list[str], r0: int, rng: random.Random,
                     drop: float = 0.25) -> list[int]:
    """The evicted units [0, r0) in a new order, fewer when exchanges are dropped; see the module docstring."""
    groups = exchanges(units, words, r0)
    if len(groups) < 3:
        return list(range(r0))
    head = groups[0] if _quiet(units[0], words[0]) else None
    body, last = groups[1 if head else 0 : -1], groups[-1]
    asked = answer_words(units)
    ordered: list[list[int]] = []
    movable: list[list[int]] = []
    for g in body:
        tokens = exchange_text(units, words, g)
        if asked & set(tokens):
            ordered.append(g)
        elif rng.random() < drop:
            continue
        elif any(t in FACT_WORDS or t.isdigit() for t in tokens):
            ordered.append(g)
        else:
            movable.append(g)
    rng.shuffle(movable)
    merged: list[list[int]] = []
    while ordered or movable:  # a uniformly random interleaving that keeps the ordered ones' order
        take = ordered if rng.random() < len(ordered) / (len(ordered) + len(movable)) else movable
        merged.append(take.pop(0))
    return [k for g in ([head] if head else []) + merged + [last] for k in g]


__all__ = ["FACT_WORDS", "answer_words", "exchange_text", "exchanges", "shuffled_history"]
