"""Keep Python's garbage collector out of timed work.

A full collection walks every tracked object; in a process that holds a model, a suite and thousands of unit
records it takes long enough to land in a unit's latency as a spike. `settle_heap()` collects once and
freezes what exists (it is not walked again until `release_heap()`), so a later full collection walks only
what was made since. Settle where nothing is timed — before a benchmark's session group, after a server's
warm-up — and release when the timed work is over (frozen objects that become cyclic garbage are never
collected until then).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


def settle_heap() -> None:
    """Collect, then move every object left to the permanent generation (`gc.freeze`)."""
    gc.collect()
    gc.freeze()


def release_heap() -> None:
    """Frozen objects back into the collected generations (`gc.unfreeze`)."""
    gc.unfreeze()


@contextmanager
def settled_heap() -> Iterator[None]:
    """`settle_heap()` for the length of a block."""
    settle_heap()
    try:
        yield
    finally:
        release_heap()
