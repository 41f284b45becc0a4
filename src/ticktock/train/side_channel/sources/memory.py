"""`memory`: a short training session from its start, laid out as the `a2t` eviction policy leaves the cache.

`layout: compacted` (`memory_examples`): units older than the last five keep their text only, recomputed as one
causal sequence; `fact_swap` and `history_shuffle` of them rename the evicted facts or lay the evicted exchanges out
anew, `local_distill` T > 0 distils their retained units from the base on the last T units. `layout: exact`
(`exact_examples`): the session whole under the runtime's eviction mask, every unit learnt by cross-entropy; the
audio is there and says what it says, so nothing is renamed, relaid or distilled. `recall_share` of them end at a
recall answer where the session has one (`memory_examples.memory_end`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar

from ..examples import SideChannelExample
from ..exact_examples import build_exact_memory_example
from ..fact_swap import swap_facts
from ..history_shuffle import shuffled_history
from ..memory_examples import build_memory_example
from ..registry import SOURCES, register
from .base import Source

LAYOUTS = ("compacted", "exact")


@register(SOURCES, "memory")
@dataclass
class MemorySource(Source):
    """Memory examples of up to `max_len` tokens; `max_gap`: a random gap of up to this many positions after half
    the examples' evicted units (a short session's facts are a few hundred positions back, a long one's thousands)."""

    memory: ClassVar[bool] = True
    max_len: int = 512
    layout: str = "compacted"
    recall_share: float = 0.0
    fact_swap: float = 0.0
    history_shuffle: float = 0.0
    local_distill: int = 0
    max_gap: int = 200

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.layout not in LAYOUTS:
            raise ValueError(f"source {self.name!r}: layout must be one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        for knob in ("recall_share", "fact_swap", "history_shuffle"):
            if not 0.0 <= getattr(self, knob) <= 1.0:
                raise ValueError(f"source {self.name!r}: {knob} must be within [0, 1], got {getattr(self, knob)}")
        if self.local_distill < 0:
            raise ValueError(f"source {self.name!r}: local_distill must be non-negative, got {self.local_distill}")
        if self.layout == "exact" and (self.fact_swap or self.history_shuffle or self.local_distill):
            raise ValueError(f"source {self.name!r}: an exact layout holds its audio whole: fact_swap, "
                             "history_shuffle and local_distill do not apply to it")

    def example(self, mix, rng: random.Random, seed: int) -> SideChannelExample:
        r = mix.render_training(rng, seed)
        return r.finish(self.lay_out(mix, r, rng))

    def lay_out(self, mix, r, rng: random.Random) -> SideChannelExample:
        """The memory example of a rendered session (`mixture.Rendered`)."""
        placement = mix.placement_for(rng)
        if self.layout == "exact":
            return build_exact_memory_example(mix.protocol, *r.session, rng, placement, self.max_len,
                                              recall_ends=r.recall_ends, recall_share=self.recall_share)
        swap = swap_facts if self.fact_swap > 0 and rng.random() < self.fact_swap else None
        shuffle = shuffled_history if self.history_shuffle > 0 and rng.random() < self.history_shuffle else None
        return build_memory_example(mix.protocol, *r.session, rng, placement, self.max_len, max_gap=self.max_gap,
                                    recall_ends=r.recall_ends, recall_share=self.recall_share, swap=swap,
                                    shuffle=shuffle, teacher_units=self.local_distill)
