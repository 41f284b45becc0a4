"""The idle context: everything a decoder's idle work (`Decoder.prepare`) may touch (docs/design.md §6).

Idle work runs between unit t−1's end and chunk t's arrival, after the session has prefilled unit t's
`<unit>` marker. It may fork the session's KV cache, run forwards on the fork (the silence hypothesis for
the coming chunk, token ids) and read the clock of what it ran; the fork is rolled back when it closes, so
nothing a decoder drafts stays in the cache. It sees nothing else of the session.

    with ctx.fork():
        root = ctx.forward_silence()             # (V,) next-token logits after a silent chunk
        logits = ctx.forward_ids([tok], kind)    # (V,) after `tok`
        ctx.cache.truncate(n)                    # back to n resident slots, inside the fork
    used = ctx.seconds()

A driver that batches several sessions' idle work runs a decoder's `prepare_steps` instead: it yields the
same forwards as requests (`silence_request`, `ids_request`) and is sent each one's logits (1 + n, V).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch import Tensor

from ..cache.kv import KVCache
from ..protocol import DuplexProtocol, SlotKind

if TYPE_CHECKING:  # the engine's request type; decoding imports nothing of the engine at run time
    from ..engine.eager import ForwardRequest

IdleSteps = Generator["ForwardRequest", Tensor, float]  # yields forwards, is sent their logits, returns seconds used


@dataclass(frozen=True)
class IdleContext:
    unit: int  # the unit about to be decoded; its `<unit>` marker is in the cache
    protocol: DuplexProtocol
    cache: KVCache  # the session's; forwards append to it, so run them inside `fork`
    silence_request: Callable[[], ForwardRequest]  # the silence hypothesis (+ what closes audio), as a forward
    ids_request: Callable[[list[int], SlotKind], ForwardRequest]  # ids of one ledger kind, as a forward
    run: Callable[[ForwardRequest], Tensor]  # a request on the session's own engine -> logits (1 + n, V)
    seconds: Callable[[], float]  # seconds of idle work so far (the clock's, of the forwards run through it)

    def forward_silence(self) -> Tensor:
        """Append the silence hypothesis -> logits (V,) at its end."""
        return self.run(self.silence_request())[-1]

    def forward_ids(self, ids: list[int], kind: SlotKind) -> Tensor:
        """Append `ids` -> logits (V,) after the last."""
        return self.run(self.ids_request(ids, kind))[-1]

    def drive(self, steps: IdleSteps) -> float:
        """Run a decoder's `prepare_steps` through `run`; what it returns (seconds used)."""
        return run_steps(steps, self.run)

    @contextmanager
    def fork(self) -> Iterator[None]:
        """Run forwards on a fork of the cache; the cache is as before once the block ends."""
        snap = self.cache.snapshot()
        try:
            yield
        finally:
            self.cache.restore(snap)


def run_steps(steps: Generator[ForwardRequest, Tensor, object], run: Callable[[ForwardRequest], Tensor]):
    """Run a generator of forward requests, sending each request's logits from `run`; return what it returns."""
    logits = None
    while True:
        try:
            req = steps.send(logits)
        except StopIteration as stop:
            return stop.value
        logits = run(req)
