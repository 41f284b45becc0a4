"""`plain`: a random window of a short training session with its segments (the paper's examples)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..examples import SideChannelExample, build_side_channel_example
from ..registry import SOURCES, register
from .base import Source


@register(SOURCES, "plain")
@dataclass
class PlainSource(Source):
    """Student (with segments) and teacher (native) sequences of one window of up to `max_len` tokens."""

    max_len: int = 512

    def example(self, mix, rng: random.Random, seed: int) -> SideChannelExample:
        r = mix.render_training(rng, seed)
        ex = build_side_channel_example(mix.protocol, *r.session, rng, mix.placement_for(rng), self.max_len)
        return r.finish(ex)
