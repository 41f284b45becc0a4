"""`ticktock memory` on several worker processes: one (session, policy) run per task.

Made for the cost clock, where a run's records do not depend on what else the machine does: the long suite
under four policies is ~29 minutes on a 2-core CPU in one process. A wall clock also times the workers'
contention. Each worker loads the model once and uses one torch thread; runs come back in the order the
single-process loop makes them.
"""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .memory import PolicyRun


@dataclass(frozen=True)
class MemoryJob:
    """What a worker needs besides the sessions (picklable)."""

    model: str | None
    device: str
    clock: str
    profile: str | None  # the cost profile's path (`bench.profiles.profile_for_clock`)
    side_channel: str  # off | after_decision | after_content
    asr_share: float
    decoder: str
    budget: int


_STATE: dict = {}


def _init(job: MemoryJob, folder: str) -> None:
    import torch

    from ..bench.profiles import scheduled_protocol
    from ..runtime import load_runtime

    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    rt = load_runtime(job.model, job.device, side_channel=job.side_channel != "off")
    if job.side_channel != "off":
        rt.protocol = scheduled_protocol(rt.protocol, job.clock, job.profile, job.device, job.asr_share)
    _STATE.update(job=job, folder=folder, rt=rt)


def _run(task: tuple[int, str, dict]) -> tuple[int, str, PolicyRun]:
    from ..bench.replay import default_tool_runner
    from ..cache.policies import make_policy
    from ..scenarios.suites import load_session
    from ..session import make_clock
    from .memory import run_policy_session

    i, name, entry = task
    job, rt = _STATE["job"], _STATE["rt"]
    _, audio = load_session(_STATE["folder"], entry)
    clock = make_clock(job.clock, job.profile, job.device)
    run = run_policy_session(rt.model, rt.protocol, entry, audio, make_policy(name, budget=job.budget), clock,
                             default_tool_runner, job.side_channel, decoder=job.decoder)
    return i, name, run


def parallel_policy_runs(job: MemoryJob, folder: str | Path, entries: list[dict], policies: list[str],
                         workers: int, progress: Callable[[dict], None] | None = None) -> dict[str, list[PolicyRun]]:
    """{policy: its run of every entry, in entry order}, computed by `workers` processes.

    progress: called with each finished run's entry.
    """
    tasks = [(i, name, e) for i, e in enumerate(entries) for name in policies]
    done: dict[tuple[int, str], PolicyRun] = {}
    ctx = mp.get_context("spawn")  # a fresh interpreter per worker: no forked torch thread pools
    with ctx.Pool(workers, initializer=_init, initargs=(job, str(folder))) as pool:
        for i, name, run in pool.imap_unordered(_run, tasks):
            done[i, name] = run
            if progress is not None:
                progress(entries[i])
    return {name: [done[i, name] for i in range(len(entries))] for name in policies}


__all__ = ["MemoryJob", "parallel_policy_runs"]
