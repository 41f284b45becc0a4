"""The `Decoder` interface: propose a draft, learn from the verdict, work in the idle window (docs/design.md §6).

Before a unit's audio arrives::

    used = decoder.prepare(ctx, window)                # idle work on an `IdleContext`; seconds used

The engine's step, for every decoder::

    draft = decoder.propose(history, max_len)          # None -> a plain step
    logits = forward(root + draft)                     # (n + 1, V)
    verdict = verify_draft(draft, logits, ...)         # the only place tokens are accepted
    decoder.observe(history, draft, logits, verdict)
    history += verdict.tokens

A decoder never accepts tokens itself, so none can break losslessness.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from torch import Tensor

from ticktock.decoding.draft import Draft
from ticktock.decoding.idle import IdleContext, IdleSteps
from ticktock.decoding.verify import Verdict


class Decoder(ABC):
    name: ClassVar[str] = "decoder"

    def reset(self) -> None:
        """Forget everything session-specific (a new session starts)."""

    def prepare(self, ctx: IdleContext, window: float) -> float:
        """Idle work for unit ``ctx.unit`` before its audio arrives; returns the seconds it used.

        ``window``: idle seconds left. Work past it is allowed but counts into the unit's latency.
        Default: none.
        """
        return 0.0

    def prepare_steps(self, ctx: IdleContext, window: float) -> IdleSteps:
        """`prepare` as a generator of its forwards (`ctx.silence_request()`, `ctx.ids_request(...)`), each sent
        its logits (1 + n, V), returning the seconds used: for a driver that batches sessions' idle work.
        Default: `prepare` itself, its forwards run on the session's own engine (it yields nothing)."""
        return self.prepare(ctx, window)
        yield  # unreachable: makes this a generator

    @abstractmethod
    def propose(self, history: list[int], max_len: int) -> Draft | None:
        """A draft of at most ``max_len`` nodes after ``history``, or None for a plain step.

        ``history``: the session's committed token ids so far (text, decision and
        terminator tokens only; no audio). Do not keep a reference to it.
        """

    def observe(self, history: list[int], draft: Draft | None, logits: Tensor, verdict: Verdict) -> None:
        """Learn from one verification forward.

        ``history``: as given to `propose` (``verdict.tokens`` not yet appended);
        ``logits``: ``(n + 1, V)``, row 0 at the root, row ``i + 1`` after draft node ``i``.
        """


class AutoregressiveDecoder(Decoder):
    """The oracle: proposes nothing, so every forward commits exactly one token."""

    name: ClassVar[str] = "ar"

    def propose(self, history: list[int], max_len: int) -> Draft | None:
        return None
