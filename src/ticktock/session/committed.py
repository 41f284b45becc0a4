"""What a session has committed outside the KV cache: its token history and the tokens still to prefill."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..engine import Segment


@dataclass
class Committed:
    history: list[int] = field(default_factory=list)  # committed non-audio token ids, for decoders' n-gram lookups
    pending: list[int] = field(default_factory=list)  # committed, not yet in the KV cache: the next forward prefills them
    pending_kinds: list[int] = field(default_factory=list)  # their ledger kinds

    def hold(self, tokens: list[int], kinds: list[int]) -> None:
        """Make `tokens` (with their ledger kinds) the pending tokens."""
        self.pending, self.pending_kinds = list(tokens), list(kinds)

    def take_pending(self) -> list[Segment]:
        """The pending tokens as a forward's leading segment ([] when none); they are no longer pending."""
        segs = [Segment(torch.tensor(self.pending), list(self.pending_kinds))] if self.pending else []
        self.hold([], [])
        return segs
