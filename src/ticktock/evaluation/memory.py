"""`ticktock memory`: long sessions under each KV eviction policy (docs/design.md §4, §7).

Every long session is replayed closed loop (AR greedy; the model hears its real audio and
its own past outputs; tool calls get the mock tools' results, as in `ticktock eval`) once
per policy, and scored on memory (peak / final resident slots), what it still knows (the
side channel's transcript WER, recall questions), time (per-unit work incl. transcription
and eviction, deadline misses) and behaviour (decisions vs the `none` run, pause takeover).

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

from ..bench.replay import split_chunks
from ..cache.kv import KVCache
from ..cache.policies import EvictionPolicy
from ..engine import borrowed_engine
from ..protocol import DuplexProtocol
from ..session import Clock, DuplexSession, Timeline, UnitResult
from ..train.examples import word_units
from .quality import SessionOutcome, by_minute, score
from .recall import recall_answers
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
        return _replay_policy(sess, protocol, entry, audio, timed, clock, tool_runner)


def _replay_policy(sess: DuplexSession, protocol: DuplexProtocol, entry: dict, audio: np.ndarray,
                   timed: TimedPolicy, clock: Clock, tool_runner) -> PolicyRun:
    units: list[UnitResult] = []
    pending: str | None = None
    with torch.no_grad():
        for chunk in split_chunks(audio, entry["n_units"], sess.chunk_samples):
            r = sess.step(chunk, pending)
            units.append(r)
            pending = tool_runner(r.tool_call) if (r.tool_call and tool_runner) else None
    evict = timed.seconds if clock.name == "wall" else [0.0] * len(units)
    timeline = Timeline(protocol.chunk_seconds)
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
    from ..bench.replay import reference_first
    return reference_first(names, "none")
