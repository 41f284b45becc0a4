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
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from torch import Tensor

from ..cache.kv import KVCache
from ..protocol import DuplexProtocol, SlotKind


@dataclass(frozen=True)
class IdleContext:
    unit: int  # the unit about to be decoded; its `<unit>` marker is in the cache
    protocol: DuplexProtocol
    cache: KVCache  # the session's; forwards append to it, so run them inside `fork`
    forward_silence: Callable[[], Tensor]  # append the silence hypothesis (+ what closes audio) -> logits (V,) at its end
    forward_ids: Callable[[list[int], SlotKind], Tensor]  # append ids of one ledger kind -> logits (V,) after the last
    seconds: Callable[[], float]  # clock seconds of the forwards run through this context so far

    @contextmanager
    def fork(self) -> Iterator[None]:
        """Run forwards on a fork of the cache; the cache is as before once the block ends."""
        snap = self.cache.snapshot()
        try:
            yield
        finally:
            self.cache.restore(snap)
