"""`BatchedSessions`: step N live sessions' chunk t together, their post-audio forwards batched.

Each session's unit is a generator of forward requests (`DuplexSession.unit_steps`); the driver
runs it in rounds: every session whose unit is still going contributes its next request, one
`BatchedEngine.forward` runs them all (weights read once, attention per session's own cache), each
session is sent its own logits and verifies, commits and proposes on its own. A session whose unit
has ended drops out of the round; the step ends when every unit has. Everything a session decides
stays per session — decoder, verification, side-channel rules, eviction, tool results — so each
session commits exactly what it commits alone.

    batch = BatchedSessions([sess_a, sess_b, sess_c])
    results = batch.step([chunk_a, chunk_b, None], tool_results=[None, "sunny", None])  # None: no chunk

Not batched yet: idle work (`prepare`: the previous unit's prefill, Speculative Listening's drafts,
a trailing transcription segment) runs per session on its own engine, session after session, when
its generator starts; the audio encoder too. Batched forwards run the eager path (the fast
engine's CUDA graphs are per session, not per batch shape).

Timing: every session's clock charges it its share of each batch (`engine.batched`), so a
session's own `UnitResult` timing reads as if it had the device to itself; `last` (a `BatchStep`)
holds the rounds' batch records, from which `bench.device_timeline.DeviceTimeline.chunk_batch`
computes each session's latency on the shared device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from ..engine import BatchedEngine, BatchRecord, ForwardRequest
from .result import UnitResult
from .session import DuplexSession, UnitSteps


@dataclass
class BatchStep:
    """How one `BatchedSessions.step` ran: its rounds, and per session (by index) where its unit ended."""

    rounds: list[BatchRecord] = field(default_factory=list)  # one batched forward each, in order
    last_round: dict[int, int] = field(default_factory=dict)  # session -> the round its unit ended in
    encoder: dict[int, float] = field(default_factory=dict)  # session -> its audio encoder's seconds

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.rounds)


class BatchedSessions:
    """Drive sessions over one model in lockstep, one batched forward per round of their units.

    clock: times the batches (None: the first session's clock).
    """

    def __init__(self, sessions: Sequence[DuplexSession], clock=None):
        self.sessions = list(sessions)
        if not self.sessions:
            raise ValueError("a batch needs at least one session")
        model = self.sessions[0].model
        if any(s.model is not model for s in self.sessions):
            raise ValueError("every session of a batch must run the same model")
        if len({id(s.engine.cache) for s in self.sessions}) != len(self.sessions):
            raise ValueError("every session of a batch needs its own engine (and cache)")
        self.engine = BatchedEngine(model, clock)
        self.last = BatchStep()

    @torch.no_grad()
    def step(self, chunks: Sequence[np.ndarray | None],
             tool_results: Sequence[str | None] | None = None) -> list[UnitResult | None]:
        """Session i consumes `chunks[i]` (None: it has no chunk now) with `tool_results[i]`; results by session."""
        if len(chunks) != len(self.sessions):
            raise ValueError(f"one chunk (or None) per session: {len(self.sessions)}, got {len(chunks)}")
        trs = list(tool_results) if tool_results is not None else [None] * len(chunks)
        steps: dict[int, UnitSteps] = {i: s.unit_steps(c, trs[i])  # every chunk checked before any runs
                                       for i, (s, c) in enumerate(zip(self.sessions, chunks)) if c is not None}
        results: list[UnitResult | None] = [None] * len(self.sessions)
        requests: dict[int, ForwardRequest] = {}
        marks: dict[int, int] = {}
        for i, gen in steps.items():  # idle work and the encoder, session by session, up to the first request
            requests[i] = next(gen)  # a unit has at least one forward (the audio prefill)
            marks[i] = len(self.sessions[i].engine.records)
        self.last = step = BatchStep()
        while requests:
            live = list(requests)
            logits = self.engine.forward([self.sessions[i].engine for i in live], [requests[i] for i in live])
            for i, z in zip(live, logits):
                try:
                    requests[i] = steps[i].send(z)
                except StopIteration as stop:
                    del requests[i]
                    results[i] = stop.value
                    step.last_round[i] = len(step.rounds)
            step.rounds.append(self.engine.records[-1])
        for i in steps:  # what the unit's time holds besides its forwards: the encoder
            own = sum(r.seconds for r in self.sessions[i].engine.records[marks[i]:])
            step.encoder[i] = results[i].post_audio - own
        return results

    def run(self, chunks: Sequence[Sequence[np.ndarray]],
            tool_results: Sequence[dict[int, str] | None] | None = None) -> list[list[UnitResult]]:
        """Step every session through its chunks (sessions may have different lengths); tool results by unit index."""
        if len(chunks) != len(self.sessions):
            raise ValueError(f"one chunk list per session: {len(self.sessions)}, got {len(chunks)}")
        tools = list(tool_results) if tool_results is not None else [None] * len(chunks)
        out: list[list[UnitResult]] = [[] for _ in self.sessions]
        for t in range(max(len(c) for c in chunks)):
            now = [c[t] if t < len(c) else None for c in chunks]
            trs = [(tools[i] or {}).get(t) for i in range(len(chunks))]
            for i, r in enumerate(self.step(now, trs)):
                if r is not None:
                    out[i].append(r)
        for s in self.sessions:
            s.flush()
        return out
