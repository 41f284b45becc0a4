"""A stratified sample of a suite's sessions, and slices of it for runs split into pieces."""

from __future__ import annotations

import random
from collections import defaultdict


def stratified_sample(entries: list[dict], n: int, seed: int = 0) -> list[dict]:
    """n entries covering every family as evenly as it can: families taken in turn, each in a seeded shuffle.

    The result is in suite order, so the same (suite, n, seed) names the same sessions on any machine.
    """
    if n >= len(entries):
        return list(entries)
    by_family: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(entries):
        by_family[e["family"]].append(i)
    rng = random.Random(seed)
    queues = []
    for fam in sorted(by_family):
        idx = by_family[fam][:]
        rng.shuffle(idx)
        queues.append(idx)
    chosen: list[int] = []
    while len(chosen) < n:
        for q in queues:
            if q and len(chosen) < n:
                chosen.append(q.pop())
    return [entries[i] for i in sorted(chosen)]


def part_of(entries: list[dict], part: str) -> list[dict]:
    """The K-th of M near-equal contiguous slices ("K/M", K from 1), for a run split into resumable pieces."""
    try:
        k, m = (int(x) for x in part.split("/"))
    except ValueError:
        raise ValueError(f"--part: expected K/M (e.g. 2/4), got {part!r}") from None
    if not 1 <= k <= m:
        raise ValueError(f"--part: need 1 <= K <= M, got {part!r}")
    lo, hi = (k - 1) * len(entries) // m, k * len(entries) // m
    return entries[lo:hi]


def first_units(entries: list[dict], n_units: int) -> list[dict]:
    """Each entry cut to its first `n_units` units (its audio is read only that far; its script's labels too)."""
    if n_units < 1:
        raise ValueError(f"a session needs at least one unit, got {n_units}")
    return [{**e, "n_units": min(e["n_units"], n_units), "units": list(e.get("units", []))[:n_units]}
            for e in entries]
