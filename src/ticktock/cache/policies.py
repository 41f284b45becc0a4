"""Eviction policies: one small class per policy, one method choosing slots (DESIGN §3)."""

from __future__ import annotations

import torch

from .kv import KVCache


class EvictionPolicy:
    """Chooses which resident slots to evict after a unit ends."""

    name = "base"

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        """Physical slot indices to evict (may be empty). `unit` = the unit that just ended."""
        raise NotImplementedError

    def apply(self, cache: KVCache, unit: int) -> int:
        slots = self.select(cache, unit)
        if slots.numel():
            cache.evict(slots)
        return int(slots.numel())


class NoEviction(EvictionPolicy):
    name = "none"

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        return torch.empty(0, dtype=torch.long)


POLICIES: dict[str, type[EvictionPolicy]] = {"none": NoEviction}


def make_policy(name: str, **kwargs) -> EvictionPolicy:
    if name not in POLICIES:
        raise ValueError(f"unknown KV policy {name!r}; known: {', '.join(POLICIES)}")
    return POLICIES[name](**kwargs)
