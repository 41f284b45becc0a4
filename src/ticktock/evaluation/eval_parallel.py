"""`ticktock eval` on several worker processes: one session per task, base and side-channel runs together.

`run_session` runs on a generous cost-model clock, so a session's outcome does not depend on what else the
machine does, and worker processes give what one process gives. Each worker loads the model(s) once and uses
one torch thread; outcomes come back in suite order.
"""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .quality import SessionOutcome


@dataclass(frozen=True)
class EvalJob:
    """What a worker needs besides the sessions (picklable)."""

    model: str | None
    base: str | None  # the base model the side channel's behaviour is compared with (None: `model`)
    device: str
    side_channel: str | None  # None: off


_STATE: dict = {}


def tool_result(call: str) -> str | None:
    """The mock tools' result; a malformed call is the model's error and gets an error result, as in use."""
    from ..scenarios.world import run_tool

    try:
        return run_tool(call)
    except Exception as err:
        return f"error: {err}"


def _init(job: EvalJob, folder: str) -> None:
    import torch

    from ..runtime import load_runtime

    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    rt = load_runtime(job.base or job.model, job.device)
    rt_side = load_runtime(job.model, job.device, side_channel=True) if job.side_channel else None
    _STATE.update(job=job, folder=folder, rt=rt, rt_side=rt_side)


def _run(task: tuple[int, dict]) -> tuple[int, SessionOutcome, SessionOutcome | None]:
    from ..scenarios.suites import load_session
    from .quality import run_session

    i, entry = task
    job, rt, rt_side = _STATE["job"], _STATE["rt"], _STATE["rt_side"]
    _, audio = load_session(_STATE["folder"], entry)
    base = run_session(rt.model, rt.protocol, entry, audio, tool_result)
    side = None if rt_side is None else run_session(rt_side.model, rt_side.protocol, entry, audio, tool_result,
                                                     side_channel=job.side_channel)
    return i, base, side


def parallel_sessions(job: EvalJob, folder: str | Path, entries: list[dict], workers: int,
                      progress: Callable[[], None] | None = None) -> tuple[list[SessionOutcome], list[SessionOutcome]]:
    """(base outcomes, side-channel outcomes (empty when off)) of every entry, in entry order, by `workers` processes."""
    done: dict[int, tuple] = {}
    ctx = mp.get_context("spawn")  # a fresh interpreter per worker: no forked torch thread pools
    with ctx.Pool(workers, initializer=_init, initargs=(job, str(folder))) as pool:
        for i, base, side in pool.imap_unordered(_run, list(enumerate(entries))):
            done[i] = base, side
            if progress is not None:
                progress()
    order = [done[i] for i in range(len(entries))]
    return [b for b, _ in order], [s for _, s in order if s is not None]


__all__ = ["EvalJob", "parallel_sessions", "tool_result"]
