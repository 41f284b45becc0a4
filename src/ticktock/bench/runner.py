"""The closed loop every benchmark runs (docs/design.md §7): sessions hear their audio chunk by chunk, on one device.

The model hears its real audio and its own past outputs (no teacher forcing). A tool call gets its result in the
next unit, from the mock tools (`scenarios.world.tool_result`) or from a given list (so several decoders of one session
get the same results at the same units). N sessions share one device (`DeviceTimeline`; N = 1 is a session
alone): before chunk t arrives each does its idle work in its share of the free time, then each decodes unit t,
one after another or in batched forwards (`session.BatchedSessions`).

    with borrowed_engine(model) as eng:
        sess = DuplexSession(model, protocol, "ar", clock=clock, system=entry["system"], engine=eng)
        (units,), _ = closed_loop([sess], [split_chunks(audio, entry["n_units"], sess.chunk_samples)])

`bench.replay` (decoders), `bench.quality` (behaviour) and `bench.memory` (eviction policies) run on it;
`bench.workers` runs their sessions on N processes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
import torch

from ..audio import SAMPLE_RATE
from ..scenarios.world import tool_result
from ..session import BatchedSessions, DuplexSession, UnitResult
from .device_timeline import DeviceTimeline, SessionClock


@dataclass
class BenchSession:
    """A scripted session as the loop replays it: its chunks, and per unit what the script expects."""

    id: str
    family: str
    system: str
    chunks: list[np.ndarray]  # each (chunk_samples,) float32 at 16 kHz
    expected: list[dict] = field(default_factory=list)  # per unit: {"decision", "content", "tags"}


def split_chunks(audio: np.ndarray, n_units: int, chunk_samples: int = SAMPLE_RATE) -> list[np.ndarray]:
    """audio (N,) -> `n_units` chunks of (chunk_samples,) float32, the last ones zero-padded."""
    chunks = []
    for i in range(n_units):
        c = np.asarray(audio[i * chunk_samples:(i + 1) * chunk_samples], dtype=np.float32)
        if len(c) < chunk_samples:
            c = np.pad(c, (0, chunk_samples - len(c)))
        chunks.append(c)
    return chunks


def sessions_from_entries(folder, entries: list[dict], chunk_samples: int = SAMPLE_RATE) -> Iterator[BenchSession]:
    """`BenchSession`s of manifest entries of a rendered suite folder, lazily (audio read one at a time)."""
    from ..scenarios.suites import load_session
    for e in entries:
        _, audio = load_session(folder, e)
        yield BenchSession(e["id"], e["family"], e["system"], split_chunks(audio, e["n_units"], chunk_samples),
                           list(e.get("units", [])))


@torch.no_grad()
def closed_loop(live: list[DuplexSession], chunks: list[list[np.ndarray]],
                tool_runner: Callable[[str], str] | None = tool_result,
                tool_results: list[dict[int, str]] | None = None, batched: bool = False,
                after_idle: Callable[[int, DuplexSession], None] | None = None
                ) -> tuple[list[list[UnitResult]], list[dict[int, str]]]:
    """Sessions `live` fed their `chunks` (one list per session) on one device, closed loop.

    tool_results: per session, the results to inject by unit index (instead of running `tool_runner` on the
    calls). batched: each chunk's decoding in batched forwards (`session.BatchedSessions`).
    after_idle(i, session): called once session i's idle work for a unit is done, before its chunk.
    Returns per session its unit results (timed on the shared device) and the tool results it was given.
    """
    n = len(live)
    device = DeviceTimeline(live[0].protocol.chunk_seconds, clocks=[SessionClock() for _ in live])
    results: list[list[UnitResult]] = [[] for _ in live]
    injected: list[dict[int, str]] = [{} for _ in live]
    pending: list[str | None] = [None] * n
    batch = BatchedSessions(live) if batched else None
    for t in range(max(len(c) for c in chunks)):
        active = [i for i in range(n) if t < len(chunks[i])]
        device.draft([(i, live[i]) for i in active], t)
        for i in active:
            if after_idle is not None:
                after_idle(i, live[i])
            if tool_results is not None:
                pending[i] = tool_results[i].get(t)
            if pending[i] is not None:
                injected[i][t] = pending[i]
        stepped: dict[int, UnitResult] = {}
        if batch is None:
            for i in active:
                t0 = time.perf_counter()
                stepped[i] = r = live[i].step(chunks[i][t], pending[i])
                r.host_seconds = time.perf_counter() - t0  # what the replay itself cost on this machine
                device.chunk(i, t, r)
        else:
            t0 = time.perf_counter()
            out = batch.step([c[t] if i in active else None for i, c in enumerate(chunks)],
                             [pending[i] if i in active else None for i in range(n)])
            stepped, host = {i: out[i] for i in active}, time.perf_counter() - t0
            for r in stepped.values():
                r.host_seconds = host / len(active)  # the batch's, shared out
            device.chunk_batch(t, stepped, batch.last)
        for i, r in stepped.items():
            results[i].append(r)
            call = r.tool_call if tool_results is None and tool_runner else None
            pending[i] = tool_runner(call) if call else None
    return results, injected
