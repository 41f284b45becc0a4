"""The chunk timeline: arrivals, idle windows, post-audio latency ℓ_t, lag b_t, misses (docs/design.md §7).

Audio chunk t arrives at t·Δ. Idle work for unit t (drafting, prefilling the
previous terminator and the unit marker) starts when unit t−1 ends; whatever
runs past the arrival delays unit t. ℓ_t runs from `ready` = max(arrival,
previous end) to the commit of unit t's last token. Lag b_t = max(0, b_{t−1} + ℓ_t − Δ).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class UnitTiming:
    index: int
    arrival: float
    ready: float
    window: float  # idle time available before the arrival
    idle_used: float
    overflow: float  # idle work that ran past `ready`
    post_audio: float  # work after the audio arrived
    end: float
    latency: float  # ℓ_t
    lag: float  # b_t

    @property
    def miss(self) -> bool:
        return self.lag > 1e-9


@dataclass
class Timeline:
    chunk_seconds: float = 1.0
    units: list[UnitTiming] = field(default_factory=list)

    @property
    def last_end(self) -> float:
        return self.units[-1].end if self.units else 0.0

    @property
    def lag(self) -> float:
        return self.units[-1].lag if self.units else 0.0

    def window_for(self, index: int) -> float:
        """Idle seconds between the end of the previous unit and the arrival of chunk `index`."""
        return max(0.0, self.arrival(index) - self.last_end)

    def arrival(self, index: int) -> float:
        # Chunk t covers [tΔ, (t+1)Δ): it is complete, and can be consumed, at (t+1)Δ.
        return (index + 1) * self.chunk_seconds

    def add(self, index: int, idle_used: float, post_audio: float) -> UnitTiming:
        arrival = self.arrival(index)
        prev_end = self.last_end
        ready = max(arrival, prev_end)
        window = max(0.0, arrival - prev_end)
        start = max(ready, prev_end + idle_used)
        end = start + post_audio
        latency = end - ready
        lag = max(0.0, self.lag + latency - self.chunk_seconds)
        u = UnitTiming(index, arrival, ready, window, idle_used, start - ready, post_audio, end, latency, lag)
        self.units.append(u)
        return u


@dataclass
class LiveTimeline:
    """ℓ_t and b_t of a session whose chunks arrive on a real clock (a live session; `bench.live`)."""

    chunk_seconds: float = 1.0
    lag: float = 0.0
    prev_end: float | None = None

    def ready(self, arrival: float) -> float:
        """When unit work may start: its chunk has arrived and the previous unit has ended."""
        return arrival if self.prev_end is None else max(arrival, self.prev_end)

    def add(self, arrival: float, end: float) -> tuple[float, float]:
        """A unit whose chunk arrived at `arrival` ended at `end` -> (ℓ_t, b_t)."""
        latency = end - self.ready(arrival)
        self.lag = max(0.0, self.lag + latency - self.chunk_seconds)
        self.prev_end = end
        return latency, self.lag
