"""`StreamingLLM`: attention sinks plus a recent window.

Follows Xiao et al., "Efficient Streaming Language Models with Attention Sinks" (2023): keep
the first few slots (the sinks, which soak up attention mass) and the most recent ones, drop
everything in between. Here the sinks default to the whole system prefix. It is the paper's
text-agnostic baseline: old speech and old answers go alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..kv import KVCache
from .base import NO_SLOTS, EvictionPolicy, check_positive, prefix_length


@dataclass
class StreamingLLM(EvictionPolicy):
    """Keep slots [0, sinks) and the last `recent` slots.

    sinks: None = the resident system prefix (counted on the cache each time).
    recent: the window; None = `budget - sinks`, so the cache holds exactly `budget` slots
    after eviction. Give `recent` or `budget`.
    """

    sinks: int | None = None
    recent: int | None = None
    budget: int | None = None
    name = "streaming_llm"

    def __post_init__(self) -> None:
        check_positive(sinks=self.sinks, recent=self.recent, budget=self.budget)
        if (self.recent is None) == (self.budget is None):
            raise ValueError("StreamingLLM needs exactly one of recent=N or budget=B")
        if self.budget is not None and self.sinks is not None and self.sinks >= self.budget:
            raise ValueError(f"StreamingLLM: sinks ({self.sinks}) must be smaller than the budget ({self.budget})")

    def window(self, cache: KVCache) -> tuple[int, int]:
        """(sinks, recent) for this cache."""
        sinks = prefix_length(cache) if self.sinks is None else self.sinks
        recent = self.recent if self.recent is not None else max(1, self.budget - sinks)
        return sinks, recent

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        sinks, recent = self.window(cache)
        if cache.length <= sinks + recent:
            return NO_SLOTS
        return torch.arange(sinks, cache.length - recent)

    @classmethod
    def from_budget(cls, budget: int) -> "StreamingLLM":
        """sinks = the system prefix, recent = B − sinks."""
        return cls(budget=budget)
