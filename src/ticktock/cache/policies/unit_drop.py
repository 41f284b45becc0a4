"""`UnitDrop`: high/low watermarks over whole units.

The scheme the MiniCPM-o duplex runtime ships: once the cache passes a high watermark, drop
the oldest units whole (marker, audio, decision, reply, everything) until it is under a low
watermark, so eviction runs rarely and in bulk. The system prefix is never dropped, nor the
unit that just ended.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...protocol import SlotKind
from ..kv import KVCache
from .base import NO_SLOTS, EvictionPolicy, check_positive, drop_oldest_units


@dataclass
class UnitDrop(EvictionPolicy):
    """When resident slots > `high`, drop the oldest whole units until resident ≤ `low`."""

    high: int
    low: int
    name = "unit_drop"

    def __post_init__(self) -> None:
        check_positive(high=self.high, low=self.low)
        if self.low > self.high:
            raise ValueError(f"UnitDrop: low ({self.low}) must not exceed high ({self.high})")

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        n = cache.length
        if n <= self.high:
            return NO_SLOTS
        droppable = (cache.kind[:n] != int(SlotKind.PREFIX)) & (cache.unit[:n] < unit)
        return drop_oldest_units(cache, droppable, self.low)

    @classmethod
    def from_budget(cls, budget: int) -> "UnitDrop":
        """high = B, low = ⌊0.75 B⌋."""
        return cls(high=budget, low=max(1, (3 * budget) // 4))
