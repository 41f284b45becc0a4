"""Eviction policies: one small class per file, one method choosing slots (docs/design.md §3).

    policy = make_policy("a2t", budget=1024)     # every parameter derived from one budget B
    policy = make_policy("unit_drop", high=2048, low=1024)
    policy.apply(cache, unit)                    # after each unit; returns slots evicted

Budget mapping used by `make_policy(name, budget=B)` (B defaults to `DEFAULT_BUDGET`):

| name | policy | parameters from B |
|---|---|---|
| `none` | `NoEviction` | — |
| `streaming_llm` | `StreamingLLM` | sinks = the system prefix, recent = B − sinks |
| `unit_drop` | `UnitDrop` | high = B, low = ⌊0.75 B⌋ |
| `a2t` | `AcousticToText` | budget = B, retention_units = 5 |
"""

from __future__ import annotations

from .acoustic_to_text import ACOUSTIC_KINDS, AcousticToText
from .base import DEFAULT_BUDGET, EvictionPolicy
from .none import NoEviction
from .streaming_llm import StreamingLLM
from .unit_drop import UnitDrop

POLICIES: dict[str, type[EvictionPolicy]] = {
    "none": NoEviction, "streaming_llm": StreamingLLM, "unit_drop": UnitDrop, "a2t": AcousticToText,
}


def make_policy(name: str, budget: int | None = None, **params) -> EvictionPolicy:
    """A policy by name: from explicit `params`, else derived from `budget` (see the table above)."""
    if name not in POLICIES:
        raise ValueError(f"unknown KV policy {name!r}; known: {', '.join(POLICIES)}")
    cls = POLICIES[name]
    if params:
        if budget is not None:
            raise ValueError(f"give {name} either budget=B or its own parameters, not both")
        try:
            return cls(**params)
        except TypeError as err:
            raise ValueError(f"bad parameters for KV policy {name!r}: {err}") from None
    budget = DEFAULT_BUDGET if budget is None else budget
    if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
        raise ValueError(f"budget must be a positive integer number of slots, got {budget!r}")
    return cls.from_budget(budget)


__all__ = ["EvictionPolicy", "NoEviction", "StreamingLLM", "UnitDrop", "AcousticToText", "ACOUSTIC_KINDS",
           "POLICIES", "DEFAULT_BUDGET", "make_policy"]
