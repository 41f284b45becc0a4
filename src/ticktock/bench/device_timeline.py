"""N sessions sharing one device, one chunk at a time (docs/design.md §7, multi-session replay).

Every session's chunk t arrives at (t+1)·Δ. The device first does the chunk work
(post-audio decoding) of every session whose chunk has arrived, in session order;
the time left until the next arrival is then shared out as draft budgets, session
by session (what one session leaves unused goes to the ones after it). Idle work
that runs past an arrival delays that chunk's work, and queueing behind other
sessions' chunk work counts into a session's post-audio latency. With N = 1 this is
exactly `session.Timeline`. Batched (`chunk_batch`): the sessions' chunk work runs as rounds of
batched forwards (`session.BatchedSessions`), each session's unit ending with its last round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..session import BatchStep, DuplexSession, UnitResult


@dataclass
class SessionClock:
    """Per-session timing state on the shared device."""

    prev_end: float = 0.0
    lag: float = 0.0
    idle_used: float = 0.0  # drafted for the next unit, in the last free window
    idle_start: float = 0.0
    window: float = 0.0


@dataclass
class DeviceTimeline:
    chunk_seconds: float = 1.0
    free: float = 0.0  # when the device is next idle
    clocks: list[SessionClock] = field(default_factory=list)  # one per session slot

    def arrival(self, t: int) -> float:
        return (t + 1) * self.chunk_seconds

    def draft(self, sessions: list[tuple[int, DuplexSession]], t: int) -> None:
        """Idle work for unit t of each (slot, session), in the device's free time before chunk t arrives."""
        order = list(sessions)
        for k, (i, s) in enumerate(order):
            c = self.clocks[i]
            left = max(0.0, self.arrival(t) - self.free)
            c.window = left / (len(order) - k)  # an equal share of what is left
            c.idle_start = self.free
            s.prepare(c.window)
            c.idle_used = s.prepared[0]
            self.free += c.idle_used

    def chunk(self, i: int, t: int, r: UnitResult) -> None:
        """Account unit t of session slot i, whose post-audio work `r.post_audio` runs next on the device."""
        c, arrival = self.clocks[i], self.arrival(t)
        ready = max(arrival, c.prev_end)
        start = max(ready, self.free)
        end = start + r.post_audio
        self.free = end
        r.window, r.idle_used = c.window, c.idle_used
        r.overflow = max(0.0, c.idle_start + c.idle_used - ready)
        r.latency = end - ready
        r.lag = max(0.0, c.lag + r.latency - self.chunk_seconds)
        c.prev_end, c.lag = end, r.lag

    def chunk_batch(self, t: int, results: dict[int, UnitResult], step: "BatchStep") -> None:
        """Account unit t of the session slots in `results`, stepped together (`session.BatchedSessions`).

        Their encoders run first, one after another, then the batched rounds; a session's unit ends with
        the round it ended in, so it waits for its batch mates' rows of every round it is part of.
        """
        arrival = self.arrival(t)
        start = max(arrival, self.free) + sum(step.encoder.values())
        ends, at = [], start
        for rnd in step.rounds:
            at += rnd.seconds
            ends.append(at)
        for i, r in results.items():
            c = self.clocks[i]
            ready = max(arrival, c.prev_end)
            end = ends[step.last_round[i]]
            r.window, r.idle_used = c.window, c.idle_used
            r.overflow = max(0.0, c.idle_start + c.idle_used - ready)
            r.latency = end - ready
            r.lag = max(0.0, c.lag + r.latency - self.chunk_seconds)
            c.prev_end, c.lag = end, r.lag
        self.free = at
