"""One device, several live sessions: a single model-work queue, chunk work first, drafting in free time (docs/design.md §7).

All model work runs on one worker thread, one job at a time, so the device
timeline is shared and the event loop never blocks. A job is CHUNK work (a unit
whose audio has arrived), SETUP work (a new session's prefix prefill) or DRAFT
work (idle-window prefill and Speculative Listening drafts), and it only starts
when no job of a higher priority is waiting. Jobs are not preempted, so the draft window is what bounds the
delay a draft can cause: each session gets a fair share of the device time that
chunk work leaves free (measured over the last `load_window` seconds, up to a
`target_load`), capped at `max_draft`. Under load the share shrinks to nothing
and decoders degrade to plain post-audio decoding instead of adding queueing.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

CHUNK, SETUP, DRAFT = 0, 1, 2  # priorities: audio that has arrived, then new sessions, then drafting


class ServerBusy(Exception):
    pass


@dataclass(order=True)
class _Job:
    priority: int
    key: float  # chunk jobs: audio arrival time, so the oldest waiting audio goes first
    seq: int
    fn: Callable[[], Any] = field(compare=False)
    future: asyncio.Future = field(compare=False)


@dataclass
class DeviceStats:
    busy_s: float = 0.0
    chunk_jobs: int = 0
    draft_jobs: int = 0
    started: float = field(default_factory=time.monotonic)

    def to_dict(self) -> dict:
        up = time.monotonic() - self.started
        return {"busy_s": round(self.busy_s, 3), "utilization": round(self.busy_s / up, 3) if up else 0.0,
                "chunk_jobs": self.chunk_jobs, "draft_jobs": self.draft_jobs}


class Scheduler:
    def __init__(self, max_sessions: int = 4, target_load: float = 0.7, max_draft: float = 0.15,
                 chunk_seconds: float = 1.0, load_window: float = 5.0):
        self.max_sessions = max_sessions
        self.target_load, self.max_draft, self.chunk_seconds = target_load, max_draft, chunk_seconds
        self.load_window = load_window
        self._chunk_busy: deque[tuple[float, float]] = deque()  # (end time, seconds) of recent CHUNK jobs
        self._lock = threading.Lock()  # draft jobs read the load from the device thread
        self.sessions: set[str] = set()
        self.stats = DeviceStats()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ticktock-device")
        self._queue: asyncio.PriorityQueue[_Job] | None = None
        self._worker: asyncio.Task | None = None
        self._seq = itertools.count()

    # ------------------------------------------------------------ admission
    def admit(self, session_id: str) -> None:
        if len(self.sessions) >= self.max_sessions:
            raise ServerBusy(f"server is at its maximum of {self.max_sessions} concurrent session(s); try again later")
        self.sessions.add(session_id)

    def release(self, session_id: str) -> None:
        self.sessions.discard(session_id)

    def chunk_load(self) -> float:
        """Fraction of the last `load_window` seconds the device spent on chunk work."""
        now = time.monotonic()
        with self._lock:
            while self._chunk_busy and self._chunk_busy[0][0] < now - self.load_window:
                self._chunk_busy.popleft()
            busy = sum(s for _, s in self._chunk_busy)
        return busy / min(self.load_window, max(now - self.stats.started, 1e-3))

    def draft_window(self) -> float:
        """Idle seconds one session may draft for: its share of the device time chunk work leaves free, capped."""
        free = max(0.0, self.target_load - self.chunk_load()) * self.chunk_seconds
        return min(self.max_draft, free / max(1, len(self.sessions)))

    # ------------------------------------------------------------ work
    async def run(self, fn: Callable[[], Any], priority: int = CHUNK, key: float | None = None) -> Any:
        """Run `fn` on the device thread after the jobs ahead of it; cancelling the caller drops a job not yet started."""
        loop = asyncio.get_running_loop()
        if self._queue is None:
            self._queue = asyncio.PriorityQueue()
            self._worker = loop.create_task(self._work())
        fut = loop.create_future()
        self._queue.put_nowait(_Job(priority, time.monotonic() if key is None else key, next(self._seq), fn, fut))
        return await fut

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            job = await self._queue.get()
            if job.future.done():  # its caller was cancelled while it waited
                continue
            t0 = time.monotonic()
            try:
                result = await loop.run_in_executor(self._pool, _no_grad, job.fn)
            except Exception as err:  # the job's caller decides what a failure means
                if not job.future.done():
                    job.future.set_exception(err)
            else:
                if not job.future.done():
                    job.future.set_result(result)
            finally:
                t1 = time.monotonic()
                self.stats.busy_s += t1 - t0
                if job.priority == CHUNK:
                    with self._lock:
                        self._chunk_busy.append((t1, t1 - t0))
                    self.stats.chunk_jobs += 1
                else:
                    self.stats.draft_jobs += 1

    def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _no_grad(fn: Callable[[], Any]) -> Any:
    with torch.no_grad():  # grad mode is per thread: the device thread never builds a graph
        return fn()
