"""`NoEviction`: the unbounded reference every other policy is measured against."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..kv import KVCache
from .base import NO_SLOTS, EvictionPolicy


@dataclass
class NoEviction(EvictionPolicy):
    """Keep every slot: resident slots grow by about one unit's worth per second of audio."""

    name = "none"

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        return NO_SLOTS

    @classmethod
    def from_budget(cls, budget: int) -> "NoEviction":
        return cls()
