"""All text the world can produce, for training the BPE tokenizer."""

from __future__ import annotations

import random

from .compose import BACKCHANNELS, SYSTEM_PROMPTS, TOOLS_LINE
from .families import CHATTER, FAMILIES
from .plan import Plan
from .world import CITIES, COUNTRIES, CURRENCIES, DAYS, MONTHS, RESTAURANTS


def corpus_texts(n_scripts: int = 900, seed: int = 12345) -> list[str]:
    """Distinct lines: system prompts, user and background utterances, replies, tool calls and
    results from `n_scripts` generated sessions (families round-robin), plus every entity name.

    Also the per-unit speak pieces, so the tokenizer sees text cut the way units cut it.
    """
    lines: dict[str, None] = {}
    add = lambda t: lines.setdefault(t, None)  # noqa: E731
    for p in SYSTEM_PROMPTS:
        add(f"{p} {TOOLS_LINE}")
    for t in [*BACKCHANNELS, *CHATTER, *DAYS, *MONTHS, *RESTAURANTS]:
        add(t)
    for c in COUNTRIES:
        add(f"{c.name} {c.capital} {c.currency} {c.continent} {c.language}")
    for c in CITIES:
        add(f"{c.name} {c.code} {c.country}")
    for code, (one, many, _) in CURRENCIES.items():
        add(f"{code} {one} {many}")
    families = list(FAMILIES.values())
    for i in range(n_scripts):
        s = families[i % len(families)](random.Random(f"corpus:{seed}:{i}"))
        for u in s.utterances:
            add(u.text)
        for ev in Plan.from_dict(s.plan).events:
            if ev.kind == "reply":
                add(ev.text)
                if ev.call:
                    add(ev.call)
                    add(ev.result)
        for u in s.units:
            if u.decision == "speak":
                add(u.content)
    return list(lines)
