"""`ticktock memory`'s runs: one (session, policy) run per task, in this process or in several workers.

Workers are made for the cost clock, where a run's records do not depend on what else the machine does: the long
suite under four policies is ~29 minutes on a 2-core CPU in one process. A wall clock also times the workers'
contention. Each worker loads the model once and uses one torch thread; runs come back in the order the
single-process loop makes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .memory import PolicyRun


@dataclass(frozen=True)
class MemoryJob:
    """How every run of a `ticktock memory` call is made (picklable: it travels to the workers)."""

    model: str | None
    device: str
    clock: str
    profile: str | None  # the cost profile's path (`bench.profiles.profile_for_clock`)
    side_channel: str  # off | after_decision | after_content
    asr_share: float
    decoder: str
    budget: int
    oracle: bool = False  # the reference words in place of the side channel's own (`run_policy_session`)
    engine: str = "auto"
    dtype: str = "float32"

    def runtime(self):
        """The model and protocol the runs use (the idle schedule's transcript cap applied with a side channel)."""
        from ..bench.profiles import scheduled_protocol
        from ..runtime import load_runtime

        import torch

        rt = load_runtime(self.model, self.device, getattr(torch, self.dtype), side_channel=self.side_channel != "off")
        if self.side_channel != "off":
            rt.protocol = scheduled_protocol(rt.protocol, self.clock, self.profile, self.device, self.asr_share)
        return rt

    def run(self, rt, entry: dict, audio, policy: str) -> PolicyRun:
        """One session (audio (N,) float32 at 16 kHz) under `policy`, on a fresh clock."""
        from ..bench.replay import default_tool_runner
        from ..cache.policies import make_policy
        from ..session import make_clock
        from .memory import run_policy_session

        return run_policy_session(rt.model, rt.protocol, entry, audio, make_policy(policy, budget=self.budget),
                                  make_clock(self.clock, self.profile, self.device), default_tool_runner,
                                  self.side_channel, decoder=self.decoder, oracle=self.oracle,
                                  engine=self.engine)


_STATE: dict = {}


def _init(job: MemoryJob, folder: str) -> None:
    from ..bench.parallel import prepare_worker

    prepare_worker()
    _STATE.update(job=job, folder=folder, rt=job.runtime())


def _run(task: tuple[str, dict]) -> PolicyRun:
    from ..scenarios.suites import load_session

    name, entry = task
    _, audio = load_session(_STATE["folder"], entry)
    return _STATE["job"].run(_STATE["rt"], entry, audio, name)


def parallel_policy_runs(job: MemoryJob, folder: str | Path, entries: list[dict], policies: list[str],
                         workers: int, progress: Callable[[dict], None] | None = None) -> dict[str, list[PolicyRun]]:
    """{policy: its run of every entry, in entry order}, computed by `workers` processes.

    progress: called with each finished run's entry.
    """
    from ..bench.parallel import spawn_map

    tasks = [(name, e) for e in entries for name in policies]
    runs = spawn_map(_run, tasks, workers, _init, (job, str(folder)),
                     on_result=None if progress is None else lambda k, _: progress(tasks[k][1]))
    return {name: [r for (n, _), r in zip(tasks, runs) if n == name] for name in policies}


__all__ = ["MemoryJob", "parallel_policy_runs"]
