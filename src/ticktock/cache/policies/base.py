"""The eviction-policy interface: one method choosing which resident slots to drop (docs/design.md §3).

A policy runs after every unit (`DuplexSession.step`), on the cache as that unit left it.
It only *chooses* physical slots; `KVCache.evict` compacts them away, survivors keep their
logical positions and the next token's position keeps advancing, so nothing is re-encoded.
"""

from __future__ import annotations

import torch

from ...protocol import SlotKind
from ..kv import KVCache

NO_SLOTS = torch.empty(0, dtype=torch.long)
DEFAULT_BUDGET = 4096  # resident slots; the acoustic-to-text paper's operating point (4K)


class EvictionPolicy:
    """Chooses which resident slots to evict after a unit ends."""

    name = "base"

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        """Physical slot indices to evict, ascending (may be empty): (n,) long. `unit` = the unit that just ended."""
        raise NotImplementedError

    def apply(self, cache: KVCache, unit: int) -> int:
        """Evict what `select` chose; returns how many slots went."""
        slots = self.select(cache, unit)
        if slots.numel():
            cache.evict(slots)
        return int(slots.numel())

    @classmethod
    def from_budget(cls, budget: int) -> "EvictionPolicy":
        """This policy with every parameter derived from one resident-slot budget B."""
        raise NotImplementedError


def check_positive(**values: int | None) -> None:
    """Raise a clear ValueError for a parameter that is not a positive integer."""
    for name, v in values.items():
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
            raise ValueError(f"{name} must be a positive integer, got {v!r}")


def drop_oldest_units(cache: KVCache, droppable: torch.Tensor, target: int) -> torch.Tensor:
    """Slots to evict: the `droppable` slots of whole units, oldest unit first, until at most `target` stay.

    droppable: (length,) bool. Returns ascending physical slot indices, (n,) long."""
    n = cache.length
    units = cache.unit[:n]
    drop = torch.zeros(n, dtype=torch.bool)
    resident = n
    for u in torch.unique(units[droppable]).tolist():  # ascending: oldest first
        if resident <= target:
            break
        members = droppable & (units == u)
        drop |= members
        resident -= int(members.sum())
    return torch.nonzero(drop).flatten()


def prefix_length(cache: KVCache) -> int:
    """How many resident slots hold the system prefix (they come first)."""
    return int((cache.kind[: cache.length] == int(SlotKind.PREFIX)).sum())
