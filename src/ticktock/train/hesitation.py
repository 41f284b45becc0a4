"""Hesitations: a reply started one unit late, after a `listen` the model wrote where the script replies.

A model that is unsure at the unit a reply should start writes `listen`; the next unit it hears silence and, never
having seen a finished request left unanswered, listens on for good (`experiments/probes/decision_margins.py`: the
decision's top-1 minus top-2 logit is 0.4–2.4 at such units and 7–20 for `listen` a unit later). A hesitated
example shows that state and teaches the way out:

    script:     ... <unit i-1> listen   <unit i> speak "the capital"   <unit i+1> speak "is paris."
    hesitated:  ... <unit i-1> listen   <unit i> listen (not learnt)   <unit i+1> speak "the capital"  ...

The `listen` at unit i is context, not a label, so the model is not taught to hesitate, only to answer after it
did. Unit i+1's audio is silence (the last half second of unit i, which rule 3 of `scenarios.script` keeps free of
the user's words, said twice); every later unit, word and turn start moves one unit on.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from ..protocol import Decision
from .examples import UnitSpec

QUIET_S = 0.5  # the end of a reply's onset unit, where the user is silent (RESPONSE_DELAY_S is 0.6 s)


def reply_onsets(units: list[UnitSpec]) -> list[int]:
    """Indices of units that start a reply: a speak or tool unit after a listening one."""
    return [i for i in range(1, len(units))
            if units[i].decision != Decision.LISTEN and units[i - 1].decision == Decision.LISTEN]


def hesitate(units: list[UnitSpec], audio: np.ndarray, words: list[dict], at: int, chunk: int,
             chunk_s: float = 1.0) -> tuple[list[UnitSpec], np.ndarray, list[dict]]:
    """The session with the reply at unit `at` started one unit late (see the module docstring).

    units: (U,) -> (U + 1,); audio: (U * chunk,) -> ((U + 1) * chunk,); words' times after unit `at` + 1 s.
    """
    if at not in reply_onsets(units):
        raise ValueError(f"unit {at} does not start a reply")
    quiet = int(QUIET_S * chunk / chunk_s)
    end = (at + 1) * chunk
    silence = np.tile(audio[end - quiet:end], chunk // quiet + 1)[:chunk]
    moved = [replace(u, heard_from=u.heard_from + 1) if u.heard_from > at else u for u in units]
    units = moved[:at] + [UnitSpec(Decision.LISTEN, hesitated=True)] + moved[at:]
    audio = np.concatenate([audio[:end], silence.astype(audio.dtype), audio[end:]])
    t = (at + 1) * chunk_s
    words = [w if w["start"] < t else {**w, "start": w["start"] + chunk_s, "end": w["end"] + chunk_s}
             for w in words]
    return units, audio, words


def maybe_hesitate(units: list[UnitSpec], audio: np.ndarray, words: list[dict], share: float, rng: random.Random,
                   chunk: int) -> tuple[list[UnitSpec], np.ndarray, list[dict]]:
    """With probability `share`, one reply of the session (drawn with `rng`) started a unit late."""
    onsets = reply_onsets(units)
    if not onsets or rng.random() >= share:
        return units, audio, words
    return hesitate(units, audio, words, rng.choice(onsets), chunk)
