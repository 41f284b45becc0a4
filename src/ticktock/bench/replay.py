"""`ticktock bench`'s replay: scripted sessions through every decoder, closed loop, a record per unit (docs/design.md §7).

The core, `replay`, takes a model, a protocol and a list of `BenchSession`s
(id, family, system prompt, one-second chunks, expected units), so it runs on
synthetic sessions without any rendered audio; `ReplayJob` replays a rendered
suite's sessions, group by group, in this process or on workers (`bench.workers`).

Tool results: `ar` runs first on each session; whenever it calls a tool, the mock
tool's result is injected in the next unit, exactly as `ticktock eval` does. Every
other decoder of that session gets the SAME results at the same units (under greedy
decoding they make the same calls anyway, since every decoder is lossless).
"""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from ..engine import borrowed_engine
from ..engine.pool import WARM_SLOTS
from ..protocol import DuplexProtocol
from ..runtime import Runtime
from ..scenarios.world import tool_result
from ..session import Clock, DuplexSession, UnitResult
from ..session.heap import settled_heap
from .runner import BenchSession, closed_loop, sessions_from_entries

UNIT_FIELDS = (
    "session", "family", "decoder", "unit", "decision", "expected", "n_tokens", "tokens", "forwards",
    "tokens_per_forward", "latency_ms", "lag_ms", "post_audio_ms", "idle_used_ms", "overflow_ms", "window_ms",
    "miss", "resident_slots", "pool_tokens", "runnerup_used", "tool_call", "host_ms", "margins", "device_mb",
    "encoder_ms", "forward_ms",
)


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
        "device_mb": getattr(r, "device_mb", None),  # live runs on a GPU: peak memory per session past the weights
        # where post_audio_ms went (the session's clock); a wall clock's latency_ms beyond it is host time between
        "encoder_ms": round(r.encoder_seconds * 1000, 3), "forward_ms": [round(s * 1000, 3) for s in r.forward_seconds],
    }


def run_group(model, protocol: DuplexProtocol, group: list[BenchSession], decoder: str,
              clock: Clock | Callable[[], Clock], tool_results: list[dict[int, str]] | None,
              tool_runner: Callable[[str], str] | None, temperature: float = 0.0,
              seeds: list[int] | None = None, side_channel: str | None = None, engine: str = "auto",
              batched: bool = False, live: str | None = None) -> tuple[list[list[UnitResult]], list[dict[int, str]]]:
    """Fresh sessions of `group` for one decoder, sharing one device (`runner.closed_loop`).

    With `tool_results` given (one dict per session), inject those; else run the tools.
    engine: "auto" | "eager" | "fast"; engines are reused from group to group (`borrowed_engine`).
    batched: step the group's chunk t together, one batched forward per round (`session.BatchedSessions`;
    eager path, drafting still per session) instead of session after session.
    live: "serial" | "batched": chunks arrive in real time, staggered (`bench.live`); else a simulated timeline.
    Returns per session the unit results and the tool results injected (by unit index)."""
    fresh = clock if callable(clock) and not isinstance(clock, Clock) else (lambda: clock)
    slots, warm = live_slots(max(len(b.chunks) for b in group)) if live else (16384, WARM_SLOTS)
    with ExitStack() as stack:
        engines = [stack.enter_context(borrowed_engine(model, engine, slots, warm)) for _ in group]
        chunks = [b.chunks for b in group]

        def sessions(seeds: list[int]) -> list[DuplexSession]:  # fresh ones: each resets its engine
            return [DuplexSession(model, protocol, decoder, clock=fresh(), temperature=temperature, seed=seed,
                                  system=b.system, side_channel=side_channel, engine=eng, max_slots=slots)
                    for b, seed, eng in zip(group, seeds, engines)]

        seeds = seeds or [0] * len(group)
        if live is None:
            return closed_loop(sessions(seeds), chunks, tool_runner, tool_results, batched)
        from .live import device_memory, live_loop, warm_up
        warm_up(sessions(seeds), chunks, batched=live == "batched", slots=warm)  # throwaway sessions, same engines
        return live_loop(sessions(seeds), chunks, tool_runner, tool_results, batched=live == "batched",
                         device_mb=device_memory(model, len(group)))


def live_slots(n_units: int) -> tuple[int, int]:
    """(KV slots, slots warmed up) of a live session of `n_units` units. A live run's engines are sized to its
    sessions, since many are made at once: the static cache holds every unit at its token cap (a power of two:
    it is most of a session's GPU memory), the CUDA graphs are captured up to a typical session's length
    (tens of slots a unit) rather than `WARM_SLOTS` (each graph engine captures its own)."""
    need = 256 + 160 * n_units
    return min(16384, 1 << (need - 1).bit_length()), min(WARM_SLOTS, 256 + 24 * n_units)


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
           tool_runner: Callable[[str], str] | None = tool_result,
           progress: Callable[[BenchSession], None] | None = None, concurrent: int = 1,
           first_index: int = 0, side_channel: str | None = None, engine: str = "auto",
           batched: bool = False, live: str | None = None) -> list[dict]:
    """Every session × decoder, closed loop; one record per unit (see `UNIT_FIELDS`).

    clock: a clock, or a zero-argument factory for a fresh one per session run.
    concurrent: N sessions at a time share one device (consecutive sessions form a group).
    side_channel: transcription segments in every session ("after_decision" / "after_content"; docs/design.md §4).
    engine: "auto" (fast on CUDA, eager elsewhere) | "eager" | "fast".
    batched: a group's chunk work in batched forwards (`run_group`); off by default.
    live: "serial" | "batched": each group in real time (`bench.live`).
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
                with settled_heap():  # no full collection of the whole heap inside a timed unit
                    results, injected = run_group(model, protocol, group, d, clock, tool_results, tool_runner,
                                                  temperature, seeds, side_channel, engine, batched, live)
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


def group_tasks(entries: list[dict], concurrent: int) -> list[tuple[int, list[dict]]]:
    """`ReplayJob` tasks: (k, the k-th group of `concurrent` consecutive entries)."""
    return [(k, entries[i:i + concurrent]) for k, i in enumerate(range(0, len(entries), concurrent))]


@dataclass(frozen=True)
class ReplayJob:
    """`ticktock bench`'s replay of one (temperature, sessions) setting, a group of sessions per task
    (`bench.workers`): each group is replayed exactly as one `replay` call over the whole suite would."""

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
    live: str | None = None  # "serial" | "batched": real time (`bench.live`)

    def load(self, device: str) -> tuple[Runtime, Clock]:
        """The runtime (its transcript cap applied) and the clock every session gets."""
        import torch

        from ..runtime import load_runtime
        from ..session import make_clock

        rt = load_runtime(self.model, device, getattr(torch, self.dtype), side_channel=self.side_channel is not None)
        if self.max_asr_tokens is not None:
            rt.protocol = dataclasses.replace(rt.protocol, max_asr_tokens=self.max_asr_tokens)
        return rt, make_clock(self.clock, self.profile, device)

    def run(self, loaded: tuple[Runtime, Clock], folder: str, task: tuple[int, list[dict]]) -> list[dict]:
        """The unit records (`UNIT_FIELDS`) of task k's group, every decoder."""
        (rt, clock), (k, entries) = loaded, task
        chunk = rt.protocol.chunk_samples
        return replay(rt.model, rt.protocol, sessions_from_entries(folder, entries, chunk), self.decoders, clock,
                      temperature=self.temperature, seed=self.seed, concurrent=self.concurrent,
                      first_index=k * self.concurrent, side_channel=self.side_channel, engine=self.engine,
                      live=self.live)
