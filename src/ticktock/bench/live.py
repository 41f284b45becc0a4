"""Sessions in real time on one device (`ticktock bench --live`): chunks arrive on the clock, staggered.

Session i of N hears its chunk t complete at t0 + i·Δ/N + (t+1)·Δ — N users who did not start talking
at the same instant. One thread drives the device (a GPU runs one stream of forwards anyway), in this
order of priority:

1. chunk work: every session whose chunk has arrived and whose previous unit has ended starts its unit
   (one whose idle work did not come round drafts nothing and prefills with its audio: `skip_idle_work`).
   serial: one unit at a time to its end, the earliest arrival first.
   batched: the units in flight advance together, a round at a time; a unit whose chunk arrives meanwhile
   joins at the next round (continuous batching). On CUDA the round's forwards that fit one `SessionGraphs`
   replay together (two or more) go through it; of the others, `BATCH_FROM` or more are one `BatchedEngine` forward
   (eager), fewer run each on its own engine (CUDA graphs).
2. idle work (`DuplexSession.prepare`: prefill, then the decoder's drafting).
   serial, when no chunk work waits: the session with the nearest arrival that has not prepared its next
   unit prepares it, in a window that ends at its own arrival and at the next other session's arrival
   but is never under its share Δ/N — so one session's drafting delays another's chunk by at most about
   that share.
   batched: every session between units starts its idle work at once (`DuplexSession.prepare_steps`), in a
   window that ends a round (its recent time) before its own arrival, read on the clock; its forwards join
   the rounds. Idle work takes free time only, so that a loaded device brings `sl` down to `ar`, not below:
   a round with chunk work takes idle forwards only where they fit the same session-graph replay (chunk
   work first); a round of idle work alone takes one replay's worth, nearest arrival first (`IDLE_ROWS`
   rows without graphs), and waits if it would still run when the next chunk comes. A session's chunk
   starts its unit once its idle work has ended (drafting stops at the first forward past the window);
   idle work whose chunk comes within a round runs in the next round whatever else is in it, as chunk work
   does.
3. otherwise: wait for the next arrival.

A unit's ℓ runs from ready = max(its arrival, its previous unit's end) to its end on the clock, so it
holds every wait behind other sessions' work; lag and misses as everywhere (`session.LiveTimeline`).
The tokens do not depend on the schedule (every decoder is lossless): they are `runner.closed_loop`'s.

    results, injected = live_loop(sessions, chunks, batched=False)  # like runner.closed_loop
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Generator

import numpy as np
import torch

from ..engine import BatchedEngine, ForwardRequest
from ..engine.session_graphs import MAX_ROWS, shared_session_graphs
from ..scenarios.world import tool_result
from ..session import DuplexSession, UnitResult
from ..session.session import UnitSteps, forward_on
from ..session.timeline import LiveTimeline

MODES = ("serial", "batched")
# Units in flight (of those the session graphs do not take) from which a round is one batched forward. Below it
# each runs on its own engine: a batched forward takes the eager path, which cost about what `BATCH_FROM`
# graph-replayed forwards do for a 7B-class model when it was set; experiments/probes/batched_round_cost.py
# measures the crossing on a device (docs/scaling.md).
BATCH_FROM = 8
# The rows of a round of idle work alone without a session-graph replay (that replay's largest bucket): a chunk
# arriving meanwhile waits for one forward of this size, not for every session's drafting at once.
IDLE_ROWS = MAX_ROWS
ROUND_EMA = 0.1  # the weight of the last round in the running round time that idle windows leave free


class RealTimer:
    """The wall clock; waiting sleeps."""

    def now(self) -> float:
        return time.perf_counter()

    def wait_until(self, t: float) -> None:
        delay = t - self.now()
        if delay > 0:
            time.sleep(delay)


class SkipTimer(RealTimer):
    """The wall clock with the driver's waits skipped: nothing runs while it waits (one thread, every
    forward synchronised by the sessions' `WallClock`), so every figure is what real waiting gives."""

    def __init__(self):
        self.skipped = 0.0

    def now(self) -> float:
        return time.perf_counter() + self.skipped

    def wait_until(self, t: float) -> None:
        self.skipped += max(0.0, t - self.now())


@dataclass
class _Slot:
    """One session on the shared device: its chunks, where it is, and its unit in flight (batched)."""

    session: DuplexSession
    chunks: list[np.ndarray]
    start: float  # its audio's time zero on the timer
    timeline: LiveTimeline
    t: int = 0  # the next unit
    steps: UnitSteps | None = None  # its unit in flight (batched)
    request: ForwardRequest | None = None  # what that unit asks of the next round
    idle: Generator[ForwardRequest, torch.Tensor, None] | None = None  # its idle work in flight (batched)
    idle_request: ForwardRequest | None = None  # what that idle work asks of the next round
    began: float = 0.0  # when its unit's work began
    window: float = 0.0  # the idle window its next unit's idle work was given
    pending: str | None = None  # a tool result for unit t
    results: list[UnitResult] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.t >= len(self.chunks)

    def arrival(self) -> float:
        return self.start + (self.t + 1) * self.timeline.chunk_seconds


@torch.no_grad()
def live_loop(live: list[DuplexSession], chunks: list[list[np.ndarray]],
              tool_runner: Callable[[str], str] | None = tool_result,
              tool_results: list[dict[int, str]] | None = None, batched: bool = False,
              timer: RealTimer | None = None, device_mb: Callable[[], float | None] | None = None,
              batch_from: int = BATCH_FROM, session_graphs: bool | None = None
              ) -> tuple[list[list[UnitResult]], list[dict[int, str]]]:
    """Sessions `live` fed their `chunks` (one list per session) in real time on one device.

    tool_results: per session, the results to inject by unit index (else `tool_runner` runs each call).
    batched: units in flight advance in rounds, batched forwards from `batch_from` units on (else one unit at a
    time). session_graphs: the round's forwards that fit (`SessionGraphs.take`, two or more) run as one CUDA graph
    replay of every session's forward; None = on CUDA; True elsewhere runs it eagerly (tests).
    timer: `RealTimer()` by default. device_mb: read at each unit's end into `UnitResult.device_mb`.
    Returns per session its unit results (ℓ, lag, window, overflow on the timer) and the tool results given.
    """
    if len(chunks) != len(live) or not live:
        raise ValueError(f"one chunk list per session, at least one session: {len(live)} sessions, "
                         f"{len(chunks)} chunk lists")
    timer = timer or RealTimer()
    delta = live[0].protocol.chunk_seconds
    t0 = timer.now()
    slots = [_Slot(s, list(c), t0 + i * delta / len(live), LiveTimeline(delta)) for i, (s, c) in
             enumerate(zip(live, chunks))]
    injected: list[dict[int, str]] = [{} for _ in live]
    engine, round_s = None, 0.0  # round_s: a round's recent wall time (batched)
    if batched:
        model = live[0].model
        graphs = model.device.type == "cuda" if session_graphs is None else session_graphs
        caches = [s.engine.cache for s in live]
        engine = BatchedEngine(model, graphs=shared_session_graphs(model, caches) if graphs else None)

    def begin(k: int, slot: _Slot) -> None:
        slot.began = timer.now()
        if slot.session.prepared is None:  # its idle work did not come round: no drafts, the prefill with the audio
            slot.window = 0.0
            slot.session.skip_idle_work()
        if tool_results is not None:
            slot.pending = tool_results[k].get(slot.t)
        if slot.pending is not None:
            injected[k][slot.t] = slot.pending

    def finish(slot: _Slot, r: UnitResult) -> None:
        end = timer.now()
        arrival = slot.arrival()
        ready = slot.timeline.ready(arrival)
        r.latency, r.lag = slot.timeline.add(arrival, end)
        r.post_audio, r.overflow, r.window = end - slot.began, max(0.0, slot.began - ready), slot.window
        r.host_seconds = end - slot.began
        r.device_mb = device_mb() if device_mb is not None else None
        slot.results.append(r)
        call = r.tool_call if tool_results is None and tool_runner else None
        slot.pending = tool_runner(call) if call else None
        slot.t += 1

    while True:
        active = [(k, s) for k, s in enumerate(slots) if not s.done]
        if not active:
            break
        now = timer.now()
        due = sorted(((k, s) for k, s in active if s.steps is None and s.idle is None and s.arrival() <= now),
                     key=lambda ks: ks[1].arrival())
        if due and engine is None:
            k, slot = due[0]
            begin(k, slot)
            finish(slot, slot.session.step(slot.chunks[slot.t], slot.pending))
            continue
        for k, slot in due:
            begin(k, slot)
            slot.steps = slot.session.unit_steps(slot.chunks[slot.t], slot.pending)
            slot.request = next(slot.steps)  # the encoder runs here; a unit has at least one forward
        if engine is not None:
            for _, slot in active:
                if slot.steps is None and slot.idle is None and slot.session.prepared is None:
                    _start_idle(slot, timer, round_s)
        flying = [s for _, s in active if s.steps is not None]
        idling = sorted((s for _, s in active if s.idle is not None), key=_Slot.arrival)  # nearest deadline first
        # idle work whose chunk comes within a round is its unit's first wait (its window is over: this forward is
        # its last): it runs now, beside the units' forwards (else units of other sessions, always in flight at
        # large N, would keep it and its unit waiting)
        now = timer.now()  # the due units' audio fronts ran since the last reading
        overdue = sum(1 for s in idling if s.arrival() <= now + round_s)
        if idling and not flying and not overdue and now + round_s > _next_arrival(active):
            idling = []  # a round of idle work alone would still run when the next chunk comes: it waits instead
        if flying or idling:
            began = timer.now()
            logits = _round(engine, [s.session.engine for s in flying + idling],
                            [s.request for s in flying] + [s.idle_request for s in idling],
                            len(flying) + overdue, batch_from)
            round_s += ROUND_EMA * (timer.now() - began - round_s)
            for slot, z in zip(flying, logits):
                try:
                    slot.request = slot.steps.send(z)
                except StopIteration as stop:
                    slot.steps = slot.request = None
                    finish(slot, stop.value)
            for slot, z in zip(idling, logits[len(flying):]):
                if z is not None:
                    _advance_idle(slot, z)
            continue
        if engine is not None or not _idle_work([s for _, s in active], timer.now(), delta / len(active)):
            timer.wait_until(min(s.arrival() for _, s in active))
    for s in live:
        s.flush()
    return [s.results for s in slots], injected


def warm_up(sessions: list[DuplexSession], chunks: list[list[np.ndarray]], batched: bool, units: int = 2,
            slots: int | None = None) -> None:
    """Run throwaway sessions through their first `units` chunks, waits skipped, every round batched: a
    process's first forwards of each kind (the audio encoder, the eager batched path's shapes) cost far more
    than the rest, and would be charged to the first sessions measured. Batched on CUDA, the session graphs
    are captured first for caches up to `slots` long (default: the caches' size)."""
    model = sessions[0].model
    if batched and model.device.type == "cuda":
        caches = [s.engine.cache for s in sessions]
        shared_session_graphs(model, caches).warm(slots or min(c.max_slots for c in caches))
    live_loop(sessions, [c[:units] for c in chunks], tool_runner=None, batched=batched, timer=SkipTimer(),
              batch_from=1)


def _round(engine: BatchedEngine, engines: list, requests: list[ForwardRequest], n_must: int, batch_from: int
           ) -> list[torch.Tensor | None]:
    """One round: `requests[:n_must]` must run (units' forwards, then idle work whose chunk comes within a round;
    each gets its logits), the rest are idle work, nearest arrival first, that may wait (None). With session graphs, the
    forwards that fit one replay together (two or more; the musts first) are one graph replay, and idle work
    joins a round only there. A round of idle work alone is bounded too, so that a chunk arriving meanwhile
    waits for about one forward: the replay if it took two or more, else the nearest arrivals up to
    `IDLE_ROWS` rows. The rest run as one batched forward from `batch_from` on (it reads the weights once for
    all, but runs the eager path), else each on its own engine (CUDA graphs)."""
    out: list[torch.Tensor | None] = [None] * len(requests)
    rest = list(range(len(requests)))
    graphs, caches = engine.graphs, [e.cache for e in engines]
    together = graphs.take(caches, requests, first=n_must) if graphs is not None else []
    if len(together) >= 2:
        rest = [k for k in rest if k not in together]
        for k, z in zip(together, engine.forward([engines[k] for k in together], [requests[k] for k in together])):
            out[k] = z
    if n_must or len(together) >= 2:
        rest = [k for k in rest if k < n_must]
    else:
        rest = _nearest_rows(rest, requests, IDLE_ROWS)
    if len(rest) >= batch_from:
        for k, z in zip(rest, engine.forward([engines[k] for k in rest], [requests[k] for k in rest])):
            out[k] = z
    for k in rest:
        if out[k] is None:
            out[k] = forward_on(engines[k])(requests[k])
    return out


def _nearest_rows(order: list[int], requests: list[ForwardRequest], rows: int) -> list[int]:
    """The first requests of `order` whose new rows add up to at most `rows` (at least one)."""
    chosen, total = [], 0
    for k in order:
        total += requests[k].new_tokens
        if chosen and total > rows:
            break
        chosen.append(k)
    return chosen


def _start_idle(slot: _Slot, timer: RealTimer, round_s: float) -> None:
    """Start a session's idle work for its next unit (batched), in a window that ends a round before its arrival
    on the timer (`round_s`: a round's recent time), so its last forward has ended when the chunk comes."""
    start = timer.now()
    slot.window = max(0.0, slot.arrival() - start - round_s)
    slot.idle = slot.session.prepare_steps(slot.window, seconds=lambda: timer.now() - start)
    slot.idle_request = next(slot.idle)  # the unit's opening: a session between units always has one


def _advance_idle(slot: _Slot, logits: torch.Tensor) -> None:
    try:
        slot.idle_request = slot.idle.send(logits)
    except StopIteration:
        slot.idle = slot.idle_request = None


def _next_arrival(active: list[tuple[int, _Slot]]) -> float:
    """When the next chunk comes, of the sessions between units."""
    return min(s.arrival() for _, s in active if s.steps is None)


def _idle_work(active: list[_Slot], now: float, share: float) -> bool:
    """Prepare the next unit of the unprepared session with the nearest arrival; False if none is left."""
    waiting = [s for s in active if s.session.prepared is None]
    if not waiting:
        return False
    slot = min(waiting, key=_Slot.arrival)
    others = [s.arrival() for s in active if s is not slot and s.arrival() > now]
    end_by = min(slot.arrival(), max(now + share, min(others, default=float("inf"))))
    slot.window = max(0.0, end_by - now)
    slot.session.prepare(slot.window)
    return True


def device_memory(model, sessions: int) -> Callable[[], float | None] | None:
    """On a GPU, a reader of the peak memory allocated past the model's weights since now, per session (MiB);
    None elsewhere."""
    if model.device.type != "cuda":
        return None
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    torch.cuda.reset_peak_memory_stats(model.device)
    return lambda: round((torch.cuda.max_memory_allocated(model.device) - weights) / 2**20 / sessions, 1)
