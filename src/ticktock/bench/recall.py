"""Recall questions of long sessions: where each is answered, and whether the model got it.

A long session (`scenarios.families.long_session`) ends with recall questions
(`entry["recall"]`: [{question, answer}]); the expected reply to each is a run of
consecutive speak units tagged `recall`. The model's answer to question i is what it
speaks from one unit before that run to three units after it (never into the next
question's run); it is right when the normalized expected answer is contained in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..session import UnitResult
from .wer import normalize_words

LEAD_UNITS = 1  # the model may answer a unit early
TRAIL_UNITS = 3  # ... or run a few units late


@dataclass(frozen=True)
class RecallItem:
    question: str
    answer: str
    units: range  # unit indices whose speech counts as the model's answer


def recall_items(entry: dict) -> list[RecallItem]:
    """One item per recall question of a manifest entry, in order (empty when it has none)."""
    qs = entry.get("recall") or []
    tagged = [u["index"] for u in entry.get("units", []) if "recall" in u.get("tags", [])]
    runs: list[list[int]] = []
    for k in tagged:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    if len(runs) != len(qs):
        raise ValueError(f"session {entry.get('id')}: {len(qs)} recall questions but {len(runs)} runs of "
                         "recall-tagged units")
    n = entry.get("n_units", (tagged[-1] + 1) if tagged else 0)
    items = []
    for i, (q, run) in enumerate(zip(qs, runs)):
        stop = min(run[-1] + 1 + TRAIL_UNITS, n)
        if i + 1 < len(runs):
            stop = min(stop, runs[i + 1][0] - LEAD_UNITS)
        items.append(RecallItem(q["question"], q["answer"], range(max(0, run[0] - LEAD_UNITS), stop)))
    return items


def spoken_in(units: list[UnitResult], window: range) -> str:
    return " ".join(units[k].text for k in window if k < len(units) and units[k].decision == "speak")


def recall_answers(entry: dict, units: list[UnitResult]) -> list[dict]:
    """Per recall question: {question, expected, spoken, hit}; a hit when the model's spoken answer contains the
    expected one (normalized)."""
    out = []
    for it in recall_items(entry):
        spoken = spoken_in(units, it.units)
        out.append({"question": it.question, "expected": it.answer, "spoken": spoken,
                    "hit": normalize_words(it.answer) in normalize_words(spoken)})
    return out


def recall_hits(entry: dict, units: list[UnitResult]) -> list[bool]:
    """Per recall question: does the model's spoken answer contain the expected one (normalized)?"""
    return [a["hit"] for a in recall_answers(entry, units)]
