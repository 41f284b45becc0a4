"""`ticktock memory`: long sessions under each KV eviction policy (docs/design.md §4, §7).

Every long session is replayed closed loop (`runner.closed_loop`: AR greedy; the model hears its real audio and
its own past outputs; tool calls get the mock tools' results, as in `ticktock eval`) once
per policy, and scored on memory (peak / final resident slots), what it still knows (the
side channel's transcript WER, recall questions), time (per-unit work incl. transcription
and eviction, deadline misses) and behaviour (decisions vs the `none` run, pause takeover).
`MemoryJob` makes a suite's runs in this process or on workers (`bench.workers`).

    runs = run_policy_session(model, protocol, entry, audio, make_policy("a2t", budget=1024), clock)
    summary = summarize(runs_of_a2t, reference=runs_of_none)
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from ..cache.kv import KVCache
from ..cache.policies import EvictionPolicy
from ..engine import borrowed_engine
from ..protocol import DuplexProtocol
from ..runtime import Runtime
from ..scenarios.word_units import word_units
from ..scenarios.world import tool_result
from ..session import Clock, DuplexSession, Timeline, UnitResult
from .quality import SessionOutcome, by_minute, score
from .recall import recall_answers
from .replay import reference_first
from .runner import closed_loop, split_chunks
from .wer import corpus_wer, user_words

SIDE_CHANNELS = ("off", "after_decision", "after_content")


def side_channel_supported() -> bool:
    """Does this build's `DuplexSession` take a `side_channel` argument (the transcription side channel)?"""
    return "side_channel" in inspect.signature(DuplexSession.__init__).parameters


def resolve_side_channel(requested: str | None) -> str:
    """The placement to run: `requested`, or `after_content` when supported and `off` otherwise."""
    if requested is None:
        return "after_content" if side_channel_supported() else "off"
    if requested not in SIDE_CHANNELS:
        raise ValueError(f"unknown side channel {requested!r}; use one of {', '.join(SIDE_CHANNELS)}")
    if requested != "off" and not side_channel_supported():
        raise ValueError(f"side channel {requested!r} requested but this build's DuplexSession has no "
                         "side_channel option; use --side-channel off")
    return requested


class TimedPolicy(EvictionPolicy):
    """Wraps a policy and records the seconds each `apply` (selection + compaction) takes."""

    def __init__(self, inner: EvictionPolicy):
        self.inner = inner
        self.name = inner.name
        self.seconds: list[float] = []

    def select(self, cache: KVCache, unit: int) -> torch.Tensor:
        return self.inner.select(cache, unit)

    def apply(self, cache: KVCache, unit: int) -> int:
        sync = torch.cuda.synchronize if cache.k.is_cuda else (lambda: None)
        sync()
        t0 = time.perf_counter()
        n = self.inner.apply(cache, unit)
        sync()
        self.seconds.append(time.perf_counter() - t0)
        return n


@dataclass
class PolicyRun:
    """One session under one policy."""

    policy: str
    entry: dict
    units: list[UnitResult]
    unit_seconds: list[float]  # per unit: idle work + post-audio work + the eviction after it
    misses: int  # units with lag > 0, eviction included in the timeline
    peak_slots: int
    final_slots: int
    transcript: str
    recall: list[dict] = field(default_factory=list)  # per question: question, expected, spoken, hit
    missed: list[dict] = field(default_factory=list)  # per missed unit: unit, unit_ms, lag_ms, forwards, tokens, tool


def _missed(index: int, r: UnitResult, seconds: float, lag: float) -> dict:
    """The `missed_units` record of a unit that missed its deadline."""
    return {"unit": index, "unit_ms": round(seconds * 1000, 1), "lag_ms": round(lag * 1000, 1),
            "forwards": r.forwards, "tokens": len(r.sequence), "tool": r.tool_call is not None}


def run_policy_session(model, protocol: DuplexProtocol, entry: dict, audio: np.ndarray, policy: EvictionPolicy,
                       clock: Clock, tool_runner: Callable[[str], str] | None = None,
                       side_channel: str = "off", max_slots: int = 32768, decoder: str = "ar",
                       oracle: bool = False, engine: str = "auto") -> PolicyRun:
    """Replay one rendered session (audio (N,) float32 at 16 kHz) under `policy`, closed loop, decoded by
    `decoder` (greedy: every decoder commits `ar`'s tokens, only the time differs).

    Eviction is measured on the wall clock when `clock` is a wall clock; the cost model has no
    entry for it (a compaction moves a few MB on a GPU: well under a millisecond), so it counts 0 there.
    oracle: the side channel (after_content) writes the reference words (the δ rule) instead of its own, so
    recall is measured with perfect transcripts in the runtime's own context (its WER is then ~0 and its times
    are not the model's).
    """
    timed = TimedPolicy(policy)
    kwargs = {"side_channel": None if side_channel == "off" else side_channel} if side_channel_supported() else {}
    if oracle:  # the reference words where the side channel's own would go (`DuplexSession` oracle_transcripts)
        kwargs["oracle_transcripts"] = word_units(entry["words"], entry["n_units"], protocol.chunk_seconds)
    with borrowed_engine(model, engine, max_slots) as eng:
        sess = DuplexSession(model, protocol, decoder, clock=clock, system=entry["system"], policy=timed,
                             max_slots=max_slots, engine=eng, **kwargs)
        (units,), _ = closed_loop([sess], [split_chunks(audio, entry["n_units"], sess.chunk_samples)], tool_runner)
        return _policy_run(sess, entry, units, timed)


def _policy_run(sess: DuplexSession, entry: dict, units: list[UnitResult], timed: TimedPolicy) -> PolicyRun:
    """A session's figures after its last unit: unit times with the evictions in, misses, slots, transcript."""
    evict = timed.seconds if sess.clock.name == "wall" else [0.0] * len(units)
    timeline = Timeline(sess.protocol.chunk_seconds)
    for i, r in enumerate(units):  # the eviction after unit i-1 runs before unit i's idle work
        timeline.add(i, r.idle_used + (evict[i - 1] if i else 0.0), r.post_audio)
    unit_seconds = [r.idle_used + r.post_audio + e for r, e in zip(units, evict)]
    missed = [_missed(t.index, units[t.index], unit_seconds[t.index], t.lag) for t in timeline.units if t.miss]
    return PolicyRun(
        policy=timed.name, entry=entry, units=units, unit_seconds=unit_seconds,
        misses=len(missed), missed=missed,
        peak_slots=sess.engine.cache.peak, final_slots=sess.engine.cache.length,
        transcript=" ".join(r.asr for r in units if r.asr),
        recall=recall_answers(entry, units),
    )


def _rate(hits: list[bool]) -> float | None:
    return round(sum(hits) / len(hits), 4) if hits else None


def summarize(runs: list[PolicyRun], reference: list[PolicyRun] | None = None, side_channel: str = "off") -> dict:
    """The per-policy JSON object of `ticktock memory` (see docs/memory.md for every key).

    reference: the same sessions under `none`, for `decision_agreement` and `peak_vs_none`.
    """
    if not runs:
        raise ValueError("no runs to summarize")
    ms = np.array([s for r in runs for s in r.unit_seconds]) * 1000.0
    peaks = [r.peak_slots for r in runs]
    transcripts = [r.transcript for r in runs]
    said = [user_words(r.entry) for r in runs]
    produced = any(t.strip() for t in transcripts)
    outcomes = [SessionOutcome(r.entry["family"], r.units, r.entry["units"]) for r in runs]
    behaviour = score(outcomes)
    recall = [a["hit"] for r in runs for a in r.recall]
    out = {
        "sessions": len(runs),
        "units": int(ms.size),
        "peak_slots": round(float(np.mean(peaks)), 1),
        "peak_slots_max": max(peaks),
        "final_slots": round(float(np.mean([r.final_slots for r in runs])), 1),
        "wer": round(corpus_wer(said, transcripts), 4) if produced else 1.0,
        "side_channel": side_channel if produced else f"{side_channel}: no transcript written, wer counted as 1.0",
        # a long suite is a few sessions of hundreds of words each: one hard session moves `wer` (docs/memory.md)
        "wer_by_session": {r.entry["id"]: round(corpus_wer([ref], [r.transcript]), 4)
                           for r, ref in zip(runs, said) if ref.strip()},
        "recall_acc": _rate(recall),
        "recall_questions": len(recall),
        "unit_ms_mean": round(float(ms.mean()), 2),
        "unit_ms_p99": round(float(np.percentile(ms, 99)), 2),
        "deadline_misses": sum(r.misses for r in runs),
        "decision_agreement": None,
        "pause_takeover": behaviour["pause_takeover"],
        "backchannel_takeover": behaviour["backchannel_takeover"],
        "decision_acc": behaviour["decision_acc"],
        "decision_acc_by_minute": by_minute(outcomes),
        "recall_answers": [{"session": r.entry["id"], **a} for r in runs for a in r.recall],
        "missed_units": [{"session": r.entry["id"], **m} for r in runs for m in r.missed],
    }
    if reference is not None:
        if [r.entry["id"] for r in reference] != [r.entry["id"] for r in runs]:
            raise ValueError("the reference runs must cover the same sessions in the same order")
        same = [a.decision == b.decision for r, ref in zip(runs, reference) for a, b in zip(r.units, ref.units)]
        out["decision_agreement"] = _rate(same)
        ref_peak = float(np.mean([r.peak_slots for r in reference]))
        out["peak_vs_none"] = round(float(np.mean(peaks)) / ref_peak - 1.0, 4) if ref_peak else None
    return out


def ordered_policies(names: list[str]) -> list[str]:
    """`none` first: every policy is compared with no eviction."""
    return reference_first(names, "none")


@dataclass(frozen=True)
class MemoryJob:
    """How every run of a `ticktock memory` call is made, one (policy, entry) per task (`bench.workers`).

    Workers are made for the cost clock: the long suite under four policies is ~29 minutes on a 2-core CPU in
    one process."""

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

    def load(self, device: str) -> Runtime:
        """The model and protocol the runs use (the idle schedule's transcript cap applied with a side channel)."""
        from ..runtime import load_runtime
        from .profiles import scheduled_protocol

        rt = load_runtime(self.model, device, getattr(torch, self.dtype), side_channel=self.side_channel != "off")
        if self.side_channel != "off":
            rt.protocol = scheduled_protocol(rt.protocol, self.clock, self.profile, device, self.asr_share)
        return rt

    def run(self, rt: Runtime, folder: str, task: tuple[str, dict]) -> PolicyRun:
        """One session under one policy, on a fresh clock."""
        from ..cache.policies import make_policy
        from ..scenarios.suites import load_session
        from ..session import make_clock

        name, entry = task
        _, audio = load_session(folder, entry)
        return run_policy_session(rt.model, rt.protocol, entry, audio, make_policy(name, budget=self.budget),
                                  make_clock(self.clock, self.profile, self.device), tool_result,
                                  self.side_channel, decoder=self.decoder, oracle=self.oracle, engine=self.engine)


def policy_tasks(entries: list[dict], policies: list[str]) -> list[tuple[str, dict]]:
    """`MemoryJob` tasks: every policy of the first entry, then of the next, ..."""
    return [(name, e) for e in entries for name in policies]


def runs_by_policy(tasks: list[tuple[str, dict]], runs: list[PolicyRun]) -> dict[str, list[PolicyRun]]:
    """{policy: its runs in entry order} of `policy_tasks` and their runs."""
    out: dict[str, list[PolicyRun]] = {}
    for (name, _), run in zip(tasks, runs):
        out.setdefault(name, []).append(run)
    return out
