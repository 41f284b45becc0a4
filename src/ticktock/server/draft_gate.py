"""Drafting only when it can pay off: a decoder wrapper that skips idle-window drafting when the window is too short.

A Speculative Listening draft has a fixed entry cost (the silence hypothesis
through the audio encoder and one forward over its embeddings) before it yields a
single token. When the scheduler grants less idle time than that — the device is
busy with other sessions' chunks, or the audio is already here — drafting would
only delay chunk work, so the unit is decoded without a first-forward draft
(the decoder's post-audio proposals, e.g. the hypothesis pool, still run).
Verification is untouched, so the output stays token-identical.
"""

from __future__ import annotations

from typing import ClassVar

from ..decoding.base import Decoder
from ..decoding.idle import IdleContext, IdleSteps
from ..decoding.registry import make_decoder

MIN_DRAFT_WINDOW = 0.03  # seconds; about the entry cost of a silence-hypothesis draft of ticktock-tiny on one CPU core


class DraftGate(Decoder):
    name: ClassVar[str] = "gate"

    def __init__(self, inner: Decoder, min_window: float = MIN_DRAFT_WINDOW):
        self.inner, self.min_window = inner, min_window
        self.drafted = self.skipped = 0

    def prepare(self, ctx: IdleContext, window: float) -> float:
        return ctx.drive(self.prepare_steps(ctx, window))

    def prepare_steps(self, ctx: IdleContext, window: float) -> IdleSteps:
        if window < self.min_window:
            self.skipped += 1
            return 0.0
        self.drafted += 1
        return (yield from self.inner.prepare_steps(ctx, window))

    def reset(self) -> None:
        self.inner.reset()

    def propose(self, history, max_len):
        return self.inner.propose(history, max_len)

    def observe(self, history, draft, logits, verdict) -> None:
        self.inner.observe(history, draft, logits, verdict)

    def __getattr__(self, attr: str):  # stats and the like of the wrapped decoder
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)


def live_decoder(name: str, min_window: float = MIN_DRAFT_WINDOW) -> Decoder:
    """The decoder `name`, gated if it works in the idle window (decoders that keep `Decoder.prepare`'s
    default are returned as is)."""
    dec = make_decoder(name)
    return DraftGate(dec, min_window) if type(dec).prepare is not Decoder.prepare else dec
