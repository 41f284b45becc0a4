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
from typing import Callable


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


_STATE: dict = {}


def _init(job: ReplayJob, folder: str, counter) -> None:
    import torch

    from ..runtime import load_runtime
    from ..session import make_clock
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    device = job.device
    if device == "cuda" and torch.cuda.device_count() > 1:  # spread the workers over the GPUs
        with counter.get_lock():
            k, counter.value = counter.value, counter.value + 1
        device = f"cuda:{k % torch.cuda.device_count()}"
        torch.cuda.set_device(device)
    rt = load_runtime(job.model, device, side_channel=job.side_channel is not None)
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
                  side_channel=job.side_channel)
    return k, recs


def parallel_replay(job: ReplayJob, folder: str | Path, entries: list[dict], workers: int,
                    progress: Callable[[int], None] | None = None) -> list[dict]:
    """Records of every session × decoder, as `replay` gives them, computed by `workers` processes.

    progress: called with the number of sessions each finished group held.
    """
    n = job.concurrent
    groups = [(k, entries[i:i + n]) for k, i in enumerate(range(0, len(entries), n))]
    done: dict[int, list[dict]] = {}
    ctx = mp.get_context("spawn")  # a fresh interpreter per worker: no forked torch thread pools
    counter = ctx.Value("i", 0)
    with ctx.Pool(workers, initializer=_init, initargs=(job, str(folder), counter)) as pool:
        for k, recs in pool.imap_unordered(_run, groups):
            done[k] = recs
            if progress is not None:
                progress(len(groups[k][1]))
    return [r for k in sorted(done) for r in done[k]]
