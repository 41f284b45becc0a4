"""`ticktock eval`'s sessions: base and side-channel runs of one session per task, in this process or in workers.

`run_session` runs on a generous cost-model clock, so a session's outcome does not depend on what else the
machine does, and worker processes give what one process gives. Each worker loads the model(s) once and uses
one torch thread; outcomes come back in suite order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .quality import SessionOutcome


def tool_result(call: str) -> str | None:
    """The mock tools' result; a malformed call is the model's error and gets an error result, as in use."""
    from ..scenarios.world import run_tool

    try:
        return run_tool(call)
    except Exception as err:
        return f"error: {err}"


@dataclass(frozen=True)
class EvalJob:
    """How every session of a `ticktock eval` call is run (picklable: it travels to the workers)."""

    model: str | None
    base: str | None  # the base model the side channel's behaviour is compared with (None: `model`)
    device: str
    side_channel: str | None  # None: off
    engine: str = "auto"
    dtype: str = "float32"

    def runtimes(self):
        """(the base runtime, the side-channel runtime or None)."""
        import torch

        from ..runtime import load_runtime

        dtype = getattr(torch, self.dtype)
        rt = load_runtime(self.base or self.model, self.device, dtype)
        return rt, load_runtime(self.model, self.device, dtype, side_channel=True) if self.side_channel else None

    def run(self, rt, rt_side, entry: dict, audio) -> tuple[SessionOutcome, SessionOutcome | None]:
        """(the base's outcome, the side channel's or None) of one session (audio (N,) float32 at 16 kHz)."""
        from .quality import run_session

        base = run_session(rt.model, rt.protocol, entry, audio, tool_result, engine=self.engine)
        if rt_side is None:
            return base, None
        return base, run_session(rt_side.model, rt_side.protocol, entry, audio, tool_result,
                                 side_channel=self.side_channel, engine=self.engine)


_STATE: dict = {}


def _init(job: EvalJob, folder: str) -> None:
    from ..bench.parallel import prepare_worker

    prepare_worker()
    _STATE.update(job=job, folder=folder, runtimes=job.runtimes())


def _run(entry: dict) -> tuple[SessionOutcome, SessionOutcome | None]:
    from ..scenarios.suites import load_session

    _, audio = load_session(_STATE["folder"], entry)
    return _STATE["job"].run(*_STATE["runtimes"], entry, audio)


def parallel_sessions(job: EvalJob, folder: str | Path, entries: list[dict], workers: int,
                      progress: Callable[[], None] | None = None) -> tuple[list[SessionOutcome], list[SessionOutcome]]:
    """(base outcomes, side-channel outcomes (empty when off)) of every entry, in entry order, by `workers` processes."""
    from ..bench.parallel import spawn_map

    done = spawn_map(_run, entries, workers, _init, (job, str(folder)),
                     on_result=None if progress is None else lambda k, _: progress())
    return [b for b, _ in done], [s for _, s in done if s is not None]


__all__ = ["EvalJob", "parallel_sessions", "tool_result"]
