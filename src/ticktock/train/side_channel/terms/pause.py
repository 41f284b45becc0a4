"""`pause`: the listen / speak / other KL between base and adapted model at the decisions of the units the script
tags with one of `tags` — `pause` (the user stopped mid-request: the base keeps listening) and/or `backchannel`
(where a user's "uh-huh" ends while the model speaks: the base keeps speaking). Among thousands of decisions these
few weigh almost nothing in `distill`'s `dec`, and they are where an adapter that reads its own transcripts takes
over."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...examples import IGNORE
from ..registry import TERMS, register
from .base import Step, Term
from .distill import coarse_kl

HOLD_TAGS = ("pause", "backchannel")


@register(TERMS, "pause")
@dataclass
class PauseHold(Term):
    tags: tuple[str, ...] = ("pause",)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.tags = tuple(self.tags)
        if not self.tags or not set(self.tags) <= set(HOLD_TAGS):
            raise ValueError(f"term 'pause': tags takes pause and/or backchannel, got {list(self.tags)}")

    def __call__(self, step: Step) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
        n, p = step.native, step.protocol
        at_pause = step.b["pause"][step.b["labels"] != IGNORE]  # (N,) paired with the teacher's events by order
        if n is None or not at_pause.any():
            return None, {}
        pause = coarse_kl(n.p_t[at_pause], n.logp_s[at_pause], [p.id("listen"), p.id("speak")]).mean()
        return pause, {"pause": pause.detach()}
