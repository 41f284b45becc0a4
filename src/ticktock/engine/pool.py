"""Engines kept for reuse: a session takes an idle one and gives it back when it ends.

A `FastEngine` captures its CUDA graphs against its own cache and static buffers, so a
fresh engine per session would capture them again for every session (seconds on a 7B
model). Consecutive sessions — a benchmark's, or a server's — therefore reuse engines:
at most as many exist as sessions ever ran at once.
"""

from __future__ import annotations

import threading
import time
import weakref
from contextlib import contextmanager
from typing import Iterator

from ..model.duplex import DuplexLM
from .eager import Engine
from .fast import FastEngine


WARM_SLOTS = 2048  # a new graph engine captures every bucket up to this context before its first session


class EnginePool:
    """Idle engines of one kind over one model.

    A new CUDA-graph engine captures its graphs before it is handed out (up to `warm_slots` resident
    slots): a capture (and the kernels' compilation) inside a session would cost that session seconds.
    """

    def __init__(self, model: DuplexLM, kind: str, max_slots: int, warm_slots: int = WARM_SLOTS):
        self.model, self.kind, self.max_slots, self.warm_slots = model, kind, max_slots, warm_slots
        self.idle: list[Engine] = []
        self.chosen: dict[tuple[int, int], str] = {}  # attention kernels the first graph engine chose, per bucket
        self.created = 0
        self.capture_seconds = 0.0  # spent capturing new engines' graphs, before their sessions
        self._lock = threading.Lock()

    def acquire(self) -> Engine:
        """An idle engine (its cache is reset by the session that takes it), or a new one."""
        from . import make_engine

        with self._lock:
            if self.idle:
                return self.idle.pop()
            self.created += 1
        engine = make_engine(self.model, self.kind, self.max_slots)
        if isinstance(engine, FastEngine) and engine.uses_graphs:
            engine.preset = dict(self.chosen)  # the same kernels as the first engine: half the captures, no timing
            t0 = time.perf_counter()
            engine.warmup(range(0, min(self.warm_slots, self.max_slots), 64))
            with self._lock:
                self.chosen.update(engine.chosen)
                self.capture_seconds += time.perf_counter() - t0
        return engine

    def release(self, engine: Engine) -> None:
        engine.clock = None
        with self._lock:
            self.idle.append(engine)


_POOLS: "weakref.WeakKeyDictionary[DuplexLM, dict[tuple[str, int, int], EnginePool]]" = weakref.WeakKeyDictionary()


def engine_pool(model: DuplexLM, kind: str = "auto", max_slots: int = 16384,
                warm_slots: int = WARM_SLOTS) -> EnginePool:
    """The process-wide pool of `kind` engines over `model` (one per model, kind, cache size and warm-up)."""
    pools = _POOLS.setdefault(model, {})
    key = (kind, max_slots, warm_slots)
    if key not in pools:
        pools[key] = EnginePool(model, kind, max_slots, warm_slots)
    return pools[key]


def graph_capture_summary(model: DuplexLM) -> str | None:
    """One line on the CUDA-graph engines made over `model` so far and the time their captures took; None if none."""
    pools = [p for p in _POOLS.get(model, {}).values() if p.capture_seconds > 0]
    if not pools:
        return None
    made, seconds = sum(p.created for p in pools), sum(p.capture_seconds for p in pools)
    return f"{made} graph engine(s) made, their CUDA graphs captured in {seconds:.1f} s (before any session)"


@contextmanager
def borrowed_engine(model: DuplexLM, kind: str = "auto", max_slots: int = 16384,
                    warm_slots: int = WARM_SLOTS) -> Iterator[Engine]:
    """An engine from the process-wide pool for the length of a `with` block (one session's life)."""
    pool = engine_pool(model, kind, max_slots, warm_slots)
    engine = pool.acquire()
    try:
        yield engine
    finally:
        pool.release(engine)
