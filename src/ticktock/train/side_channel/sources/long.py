"""`long`: memory examples cut from 5-10 minute `long` sessions (training voices, seeds of their own).

The contexts `a2t` leaves after minutes, with a recall question's facts thousands of positions back. Rendering one
takes seconds, so each worker cuts `reuse` examples (different ends) from each long session it renders.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..examples import SideChannelExample
from ..registry import SOURCES, register
from .memory import MemorySource


@register(SOURCES, "long")
@dataclass
class LongSource(MemorySource):
    """A `memory` source over long sessions; no gaps are added (they are real here)."""

    max_len: int = 2048
    max_gap: int = 0
    reuse: int = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.reuse < 1:
            raise ValueError(f"source {self.name!r}: reuse must be at least 1, got {self.reuse}")

    def example(self, mix, rng: random.Random, seed: int) -> SideChannelExample:
        r = mix.long_session(seed, self.reuse)
        return r.finish(self.lay_out(mix, r, rng))
