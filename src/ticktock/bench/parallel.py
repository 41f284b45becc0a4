"""Replay a suite on several worker processes (made for the cost clock: a wall clock also times their contention).

Work is split by session group (the `concurrent` sessions that share one device), so
every group is replayed exactly as the single-process `replay` would; the records
come back in suite order. Each worker loads the model once and uses one torch thread.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class ReplayJob:
    """Everything a worker needs besides the sessions (picklable)."""

    model: str | None
    device: str
    clock: str
    profile: str | None
    decoders: tuple[str, ...]
    temperature: float
    seed: int
    concurrent: int
    side_channel: str | None = None
    max_asr_tokens: int | None = None  # the idle schedule's transcript cap (None: the protocol's own)
    engine: str = "auto"
    dtype: str = "float32"


_STATE: dict = {}


def prepare_worker() -> None:
    """Set a fresh worker process up for inference: one torch thread (workers are the parallelism), no autograd."""
    import torch

    torch.set_num_threads(1)
    torch.set_grad_enabled(False)


def _init(job: ReplayJob, folder: str, counter) -> None:
    import torch

    from ..runtime import load_runtime
    from ..session import make_clock
    prepare_worker()
    device = job.device
    if device == "cuda" and torch.cuda.device_count() > 1:  # spread the workers over the GPUs
        with counter.get_lock():
            k, counter.value = counter.value, counter.value + 1
        device = f"cuda:{k % torch.cuda.device_count()}"
        torch.cuda.set_device(device)
    rt = load_runtime(job.model, device, getattr(torch, job.dtype), side_channel=job.side_channel is not None)
    if job.max_asr_tokens is not None:
        rt.protocol = dataclasses.replace(rt.protocol, max_asr_tokens=job.max_asr_tokens)
    _STATE.update(job=job, folder=folder, rt=rt, clock=make_clock(job.clock, job.profile, device))


def _run(task: tuple[int, list[dict]]) -> tuple[int, list[dict]]:
    from .replay import replay, sessions_from_entries
    k, entries = task
    job, rt = _STATE["job"], _STATE["rt"]
    chunk = int(round(rt.protocol.chunk_seconds * 16000))
    sessions = list(sessions_from_entries(_STATE["folder"], entries, chunk))
    recs = replay(rt.model, rt.protocol, sessions, job.decoders, _STATE["clock"], temperature=job.temperature,
                  seed=job.seed, concurrent=job.concurrent, first_index=k * job.concurrent,
                  side_channel=job.side_channel, engine=job.engine)
    return k, recs


def _indexed(call: tuple[Callable, int, Any]) -> tuple[int, Any]:
    fn, k, task = call
    return k, fn(task)


def spawn_map(fn: Callable[[Any], Any], tasks: Sequence, workers: int, initializer: Callable, initargs: tuple,
              on_result: Callable[[int, Any], None] | None = None) -> list:
    """[fn(task) for task in tasks], computed by `workers` spawned processes, each set up once by
    `initializer(*initargs)` (a fresh interpreter per worker: no forked torch thread pools). `fn` must be a
    module-level function; on_result(index, result) is called as each task finishes, in any order."""
    out: list = [None] * len(tasks)
    with mp.get_context("spawn").Pool(workers, initializer=initializer, initargs=initargs) as pool:
        for k, res in pool.imap_unordered(_indexed, [(fn, k, t) for k, t in enumerate(tasks)]):
            out[k] = res
            if on_result is not None:
                on_result(k, res)
    return out


def parallel_replay(job: ReplayJob, folder: str | Path, entries: list[dict], workers: int,
                    progress: Callable[[int], None] | None = None) -> list[dict]:
    """Records of every session × decoder, as `replay` gives them, computed by `workers` processes.

    progress: called with the number of sessions each finished group held.
    """
    n = job.concurrent
    groups = [(k, entries[i:i + n]) for k, i in enumerate(range(0, len(entries), n))]
    counter = mp.get_context("spawn").Value("i", 0)
    done = spawn_map(_run, groups, workers, _init, (job, str(folder), counter),
                     on_result=None if progress is None else lambda k, _: progress(len(groups[k][1])))
    return [r for _, recs in done for r in recs]
