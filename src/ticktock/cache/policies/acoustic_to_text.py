"""`AcousticToText`: evict old acoustic and structural slots, keep the text.

Follows "Acoustic-to-Text KV Compression for Full-Duplex Speech Models" (docs/design.md §4): the
model writes a transcript of what it heard into its own context (the `<|asr_start|> …
<|asr_end|>` side channel); after each unit, while the cache holds more than `budget`
slots, the unit marker, audio, decision, transcript delimiters and terminators of the
oldest unit outside the last `retention_units` units are evicted. Transcript text,
response text, tool calls, tool results and the system prefix stay, so what was said
remains readable after its audio is gone. The retention window covers the side channel's
emission delay (words are transcribed up to a few units after they are heard).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...protocol import SlotKind
from ..kv import KVCache
from .base import NO_SLOTS, EvictionPolicy, check_positive, drop_oldest_units

# What goes: the sound of a unit and the tokens that only structure it.
ACOUSTIC_KINDS = frozenset({SlotKind.UNIT_MARKER, SlotKind.AUDIO, SlotKind.DECISION, SlotKind.ASR_MARK,
                            SlotKind.TERMINATOR})
# What stays: PREFIX, TEXT, TOOL, ASR, TOOL_RESULT (and any kind not listed above).


@dataclass
class AcousticToText(EvictionPolicy):
    """While resident > `budget`, evict `ACOUSTIC_KINDS` slots unit by unit, oldest first,
    never touching the last `retention_units` units (the one that just ended included)."""

    budget: int
    retention_units: int = 5
    name = "a2t"

    def __post_init__(self) -> None:
        check_positive(budget=self.budget)
        if not isinstance(self.retention_units, int) or self.retention_units < 0:
            raise ValueError(f"retention_units must be an integer ≥ 0, got {self.retention_units!r}")

    def eligible(self, cache: KVCache, unit: int) -> torch.Tensor:
        """(length,) bool: acoustic/structural slots of units outside the retention window."""
        n = cache.length
        acoustic = torch.isin(cache.kind[:n].to(torch.long), torch.tensor(sorted(int(k) for k in ACOUSTIC_KINDS)))
        old = (cache.unit[:n] >= 0) & (cache.unit[:n] <= unit - self.retention_units)
        return acoustic & old

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        n = cache.length
        if n <= self.budget:
            return NO_SLOTS
        return drop_oldest_units(cache, self.eligible(cache, unit), self.budget)

    @classmethod
    def from_budget(cls, budget: int) -> "AcousticToText":
        """budget = B, retention window = 5 units (the paper's)."""
        return cls(budget=budget)
