"""Replay scripted sessions through every decoder, closed loop, and record every unit (docs/design.md §7).

The core, `replay`, takes a model, a protocol and a list of `BenchSession`s
(id, family, system prompt, one-second chunks, expected units), so it runs on
synthetic sessions without any rendered audio. `sessions_from_entries` turns the
entries of a rendered suite (`scenarios.store.ensure_suite`) into `BenchSession`s.

Tool results: `ar` runs first on each session; whenever it calls a tool, the mock
tool's result is injected in the next unit, exactly as `ticktock eval` does. Every
other decoder of that session gets the SAME results at the same units (under greedy
decoding they make the same calls anyway, since every decoder is lossless).
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import numpy as np

from ..engine import borrowed_engine
from ..protocol import DuplexProtocol
from ..session import BatchedSessions, Clock, DuplexSession, UnitResult
from .device_timeline import DeviceTimeline, SessionClock

UNIT_FIELDS = (
    "session", "family", "decoder", "unit", "decision", "expected", "n_tokens", "tokens", "forwards",
    "tokens_per_forward", "latency_ms", "lag_ms", "post_audio_ms", "idle_used_ms", "overflow_ms", "window_ms",
    "miss", "resident_slots", "pool_tokens", "runnerup_used", "tool_call", "host_ms", "margins",
)


@dataclass
class BenchSession:
    id: str
    family: str
    system: str
    chunks: list[np.ndarray]
    expected: list[dict] = field(default_factory=list)  # per unit: {"decision", "content", "tags"}


def default_tool_runner(call: str) -> str:
    """The mock tools of `ticktock eval`; a malformed call gets an error result, as in use."""
    from ..scenarios.world import run_tool
    try:
        return run_tool(call)
    except Exception as err:  # the model's mistake, not ours
        return f"error: {err}"


def split_chunks(audio: np.ndarray, n_units: int, chunk_samples: int = 16000) -> list[np.ndarray]:
    chunks = []
    for i in range(n_units):
        c = np.asarray(audio[i * chunk_samples:(i + 1) * chunk_samples], dtype=np.float32)
        if len(c) < chunk_samples:
            c = np.pad(c, (0, chunk_samples - len(c)))
        chunks.append(c)
    return chunks


def sessions_from_entries(folder, entries: list[dict], chunk_samples: int = 16000) -> Iterator[BenchSession]:
    """`BenchSession`s of manifest entries of a rendered suite folder, lazily (audio read one at a time)."""
    from ..scenarios.suites import load_session
    for e in entries:
        _, audio = load_session(folder, e)
        yield BenchSession(e["id"], e["family"], e["system"], split_chunks(audio, e["n_units"], chunk_samples),
                           list(e.get("units", [])))


def unit_record(sess: BenchSession, decoder: str, r: UnitResult) -> dict:
    exp = sess.expected[r.index]["decision"] if r.index < len(sess.expected) else None
    return {
        "session": sess.id, "family": sess.family, "decoder": decoder, "unit": r.index,
        "decision": r.decision, "expected": exp, "n_tokens": len(r.tokens), "tokens": list(r.tokens),
        "forwards": r.forwards, "tokens_per_forward": list(r.tokens_per_forward),
        "latency_ms": r.latency * 1000, "lag_ms": r.lag * 1000, "post_audio_ms": r.post_audio * 1000,
        "idle_used_ms": r.idle_used * 1000, "overflow_ms": r.overflow * 1000, "window_ms": r.window * 1000,
        "miss": r.miss, "resident_slots": r.resident_slots, "pool_tokens": r.pool_tokens,
        "runnerup_used": bool(r.runnerup_used), "tool_call": r.tool_call,
        "host_ms": round(getattr(r, "host_seconds", 0.0) * 1000, 3),
        "margins": [round(m, 4) for m in r.margins],
    }


def run_group(model, protocol: DuplexProtocol, group: list[BenchSession], decoder: str,
              clock: Clock | Callable[[], Clock], tool_results: list[dict[int, str]] | None,
              tool_runner: Callable[[str], str] | None, temperature: float = 0.0,
              seeds: list[int] | None = None, side_channel: str | None = None, engine: str = "auto",
              batched: bool = False) -> tuple[list[list[UnitResult]], list[dict[int, str]]]:
    """Fresh sessions of `group` for one decoder, sharing one device (see `DeviceTimeline`).

    With `tool_results` given (one dict per session), inject those; else run the tools.
    engine: "auto" | "eager" | "fast"; engines are reused from group to group (`borrowed_engine`).
    batched: step the group's chunk t together, one batched forward per round (`session.BatchedSessions`;
    eager path, drafting still per session) instead of session after session.
    Returns per session the unit results and the tool results injected (by unit index)."""
    with ExitStack() as stack:
        engines = [stack.enter_context(borrowed_engine(model, engine)) for _ in group]
        return _run_group(model, protocol, group, decoder, clock, tool_results, tool_runner, temperature,
                          seeds or [0] * len(group), side_channel, engines, batched)


def _run_group(model, protocol, group, decoder, clock, tool_results, tool_runner, temperature, seeds,
               side_channel, engines, batched=False):
    fresh = clock if callable(clock) and not isinstance(clock, Clock) else (lambda: clock)
    live = [DuplexSession(model, protocol, decoder, clock=fresh(), temperature=temperature, seed=seed,
                          system=b.system, side_channel=side_channel, engine=eng)
            for b, seed, eng in zip(group, seeds, engines)]
    device = DeviceTimeline(protocol.chunk_seconds, clocks=[SessionClock() for _ in group])
    results: list[list[UnitResult]] = [[] for _ in group]
    injected: list[dict[int, str]] = [{} for _ in group]
    pending: list[str | None] = [None] * len(group)
    batch = BatchedSessions(live) if batched else None
    for t in range(max(len(b.chunks) for b in group)):
        active = [i for i, b in enumerate(group) if t < len(b.chunks)]
        device.draft([(i, live[i]) for i in active], t)
        for i in active:
            if tool_results is not None:
                pending[i] = tool_results[i].get(t)
            if pending[i] is not None:
                injected[i][t] = pending[i]
        stepped: dict[int, UnitResult] = {}
        if batch is None:
            for i in active:
                t0 = time.perf_counter()
                stepped[i] = r = live[i].step(group[i].chunks[t], pending[i])
                r.host_seconds = time.perf_counter() - t0  # what the replay itself cost on this machine
                device.chunk(i, t, r)
        else:
            t0 = time.perf_counter()
            out = batch.step([b.chunks[t] if i in active else None for i, b in enumerate(group)],
                             [pending[i] if i in active else None for i in range(len(group))])
            stepped, host = {i: out[i] for i in active}, time.perf_counter() - t0
            for r in stepped.values():
                r.host_seconds = host / len(active)  # the batch's, shared out
            device.chunk_batch(t, stepped, batch.last)
        for i, r in stepped.items():
            results[i].append(r)
            call = r.tool_call if tool_results is None and tool_runner else None
            pending[i] = tool_runner(call) if call else None
    return results, injected


def reference_first(names: Iterable[str], reference: str) -> list[str]:
    """`reference` first (what every comparison is against), added if missing; blanks and duplicates dropped."""
    out = [reference]
    for n in names:
        n = n.strip()
        if n and n not in out:
            out.append(n)
    return out


def ordered_decoders(decoders: Iterable[str]) -> list[str]:
    """`ar` first: every benchmark metric is relative to it."""
    return reference_first(decoders, "ar")


def replay(model, protocol: DuplexProtocol, sessions: Iterable[BenchSession], decoders: Iterable[str],
           clock: Clock | Callable[[], Clock], temperature: float = 0.0, seed: int = 0,
           tool_runner: Callable[[str], str] | None = default_tool_runner,
           progress: Callable[[BenchSession], None] | None = None, concurrent: int = 1,
           first_index: int = 0, side_channel: str | None = None, engine: str = "auto",
           batched: bool = False) -> list[dict]:
    """Every session × decoder, closed loop; one record per unit (see `UNIT_FIELDS`).

    clock: a clock, or a zero-argument factory for a fresh one per session run.
    concurrent: N sessions at a time share one device (consecutive sessions form a group).
    side_channel: transcription segments in every session ("after_decision" / "after_content"; docs/design.md §4).
    engine: "auto" (fast on CUDA, eager elsewhere) | "eager" | "fast".
    batched: a group's chunk work in batched forwards (`run_group`); off by default.
    Sampling (temperature > 0) seeds session k (k counted from `first_index`) with `seed + k`,
    the same for every decoder.
    """
    import torch

    decs = ordered_decoders(decoders)
    records: list[dict] = []
    with torch.no_grad():
        for k, group in enumerate(_groups(sessions, concurrent)):
            seeds = [seed + first_index + k * concurrent + j for j in range(len(group))]
            tool_results: list[dict[int, str]] | None = None
            for d in decs:
                results, injected = run_group(model, protocol, group, d, clock, tool_results, tool_runner,
                                              temperature, seeds, side_channel, engine, batched)
                if tool_results is None:  # `ar` ran the tools; the others reuse its results
                    tool_results = injected
                for sess, rs in zip(group, results):
                    records += [unit_record(sess, d, r) for r in rs]
            if progress is not None:
                for sess in group:
                    progress(sess)
    return records


def _groups(sessions: Iterable[BenchSession], n: int) -> Iterator[list[BenchSession]]:
    if n < 1:
        raise ValueError(f"concurrent sessions must be >= 1, got {n}")
    group: list[BenchSession] = []
    for s in sessions:
        group.append(s)
        if len(group) == n:
            yield group
            group = []
    if group:
        yield group
