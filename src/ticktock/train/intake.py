"""Example intake: rendering processes feed the trainer's replay buffer through a reader thread.

Why a thread: an example (a few hundred KB of audio and ids) is more than a pipe holds, so a worker's queue
feeder writes it only while the trainer reads. A trainer that took between steps only what `Queue.empty()`
said had arrived got about one example per poll: on the H200 machine 15 workers able to make ~200 examples a
second delivered 19, each example was drawn ~17 times, and recall answers were learnt by heart
(experiments/LOG.md, run Z). A thread blocked in `get` takes them as fast as they come.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import threading
import time
from collections import deque
from typing import Any, Callable

import torch

MAX_ERRORS = 1000  # failed draws tolerated before the trainer gives up on its workers


def worker_loop(make: Callable[[int], Any], seed: int, q: mp.Queue) -> None:
    """A rendering process: examples of seeds seed * 1_000_003 + i, i = 0, 1, ...; a failed draw is reported
    as its error's repr and the stream goes on."""
    torch.set_num_threads(1)
    i = 0
    while True:
        try:
            q.put(make(seed * 1_000_003 + i))
        except Exception as err:
            q.put(repr(err))
        i += 1


class ExampleIntake:
    """`n_workers` processes running `make`, and a thread moving what they make into `buffer` (a deque of at
    most `capacity` examples, oldest first; appends are atomic, so the trainer samples it while it grows).

    `ahead`: at most that many examples taken in beyond those the trainer has drawn (`took`); past it the reader
    waits and the workers block on the full queue. Where examples come faster than steps use them (cheap ones,
    a trainer on the same CPU) the workers then stop taking cores from the trainer; where steps are faster (a GPU)
    it never binds."""

    def __init__(self, make: Callable[[int], Any], n_workers: int, seed: int, capacity: int,
                 ahead: int | None = None):
        ctx = mp.get_context("fork")
        self._q: mp.Queue = ctx.Queue(maxsize=4096)
        self._procs = [ctx.Process(target=worker_loop, args=(make, seed * 100 + w, self._q), daemon=True)
                       for w in range(n_workers)]
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self.buffer: deque = deque(maxlen=capacity)
        self.made = 0  # examples received
        self.drawn = 0  # examples the trainer drew (`took`)
        self._ahead = ahead
        self.errors = 0
        self.last_error = ""

    def start(self) -> ExampleIntake:
        for p in self._procs:
            p.start()
        self._reader.start()
        return self

    def took(self, n: int) -> None:
        """The trainer drew `n` examples: as many more may be taken in."""
        self.drawn += n

    def _read(self) -> None:
        while not self._stop.is_set():
            if self._ahead is not None and self.made - self.drawn >= self._ahead:
                time.sleep(0.01)
                continue
            try:
                item = self._q.get(timeout=0.2)
            except queue.Empty:
                continue
            except (EOFError, OSError):  # the queue was closed under us: stopping
                return
            if isinstance(item, str):
                self.errors += 1
                self.last_error = item
            else:
                self.buffer.append(item)
                self.made += 1

    def wait_for(self, n: int) -> float:
        """Block until the buffer holds `n` examples; returns the seconds waited. Raises once the workers have
        failed `MAX_ERRORS` draws, or when every worker has died."""
        t0 = time.time()
        while len(self.buffer) < n:
            self._check()
            time.sleep(0.005)
        self._check()
        return time.time() - t0

    def _check(self) -> None:
        if self.errors > MAX_ERRORS:
            raise RuntimeError(f"example workers keep failing: {self.last_error}")
        if self._procs and not any(p.is_alive() for p in self._procs):
            raise RuntimeError("every example worker has exited")

    def stop(self) -> None:
        self._stop.set()
        self._reader.join(timeout=2)  # first: a worker killed mid-message would leave the reader blocked
        for p in self._procs:
            p.kill()


__all__ = ["ExampleIntake", "MAX_ERRORS", "worker_loop"]
