"""A benchmark's sessions in this process or on N worker processes: the same runs, the same results, in task order.

Made for the cost clock, where a run's records do not depend on what else the machine does (a wall clock also
times the workers' contention). A `Job` says what a process loads once (`load`: the model, a clock) and how it
runs one task (`run`: a session, a group of sessions, a (policy, session) pair) of a rendered suite's folder.
Each worker is a fresh interpreter (spawned: no forked torch thread pools) with one torch thread, on its own
GPU when there are several.

    results = run_jobs(job, folder, tasks, workers=4, on_result=lambda k, res: bar.advance())
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence


class Job(Protocol):
    """How every task of one command is run (a frozen dataclass: it travels to the workers)."""

    device: str

    def load(self, device: str) -> Any:
        """What every task needs, loaded once per process (on `device`)."""

    def run(self, loaded: Any, folder: str, task: Any) -> Any:
        """One task's result, its sessions read from the suite `folder`."""


def prepare_worker() -> None:
    """Set a fresh worker process up for inference: one torch thread (workers are the parallelism), no autograd."""
    import torch

    torch.set_num_threads(1)
    torch.set_grad_enabled(False)


def worker_device(device: str, counter) -> str:
    """`device`, or with several GPUs the next one in turn (`counter`: a shared int), made current."""
    import torch

    if device != "cuda" or torch.cuda.device_count() <= 1:
        return device
    with counter.get_lock():
        k, counter.value = counter.value, counter.value + 1
    device = f"cuda:{k % torch.cuda.device_count()}"
    torch.cuda.set_device(device)
    return device


_STATE: dict = {}


def _init(job: Job, folder: str, counter) -> None:
    prepare_worker()
    _STATE.update(job=job, folder=folder, loaded=job.load(worker_device(job.device, counter)))


def _run(indexed: tuple[int, Any]) -> tuple[int, Any]:
    k, task = indexed
    return k, _STATE["job"].run(_STATE["loaded"], _STATE["folder"], task)


def run_jobs(job: Job, folder: str | Path, tasks: Sequence, workers: int = 1, loaded: Any = None,
             on_result: Callable[[int, Any], None] | None = None) -> list:
    """[job.run(loaded, folder, task) for task in tasks], here (workers 1; `loaded`, or `job.load` when None) or
    on `workers` spawned processes, each loading once. on_result(index, result) as each task finishes, in any
    order with workers."""
    out: list = [None] * len(tasks)
    if workers <= 1:
        loaded = job.load(job.device) if loaded is None else loaded
        for k, task in enumerate(tasks):
            out[k] = job.run(loaded, str(folder), task)
            if on_result is not None:
                on_result(k, out[k])
        return out
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init, initargs=(job, str(folder), ctx.Value("i", 0))) as pool:
        for k, res in pool.imap_unordered(_run, list(enumerate(tasks))):
            out[k] = res
            if on_result is not None:
                on_result(k, res)
    return out
