"""Model quality on scripted sessions (AR greedy, closed loop): `ticktock eval` (docs/design.md §7 behaviour).

Every session is replayed chunk by chunk (`runner.closed_loop`); the model hears its real audio and its
own past outputs (no teacher forcing). Tool results come from the mock tools when
the model calls one, so a wrong call gets a different result, as in real use.
Silence agreement (the paper's Observation 1/2) uses `sl-silence` (lossless, so
the committed tokens are the AR ones) and compares its silence draft to them.
`EvalJob` runs a suite's sessions, base and side channel, in this process or on workers (`bench.workers`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..engine import borrowed_engine
from ..protocol import DuplexProtocol
from ..runtime import Runtime
from ..scenarios import same_call
from ..scenarios.world import tool_result
from ..session import CostModelClock, DuplexSession, UnitResult
from .runner import closed_loop, split_chunks

# A fast, fixed cost per forward so every silence draft runs to its end (agreement needs whole drafts).
_GENEROUS = {"new_tokens": [1, 4096], "context": [0, 1 << 20], "ms": [[1, 1], [1, 1]], "encoder_ms": 0}


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9:.$ ]", " ", text.lower())).strip(" .")


@dataclass
class SessionOutcome:
    family: str
    units: list[UnitResult]
    expected: list[dict]
    answer_ok: bool | None = None
    tool_ok: bool | None = None
    drafts: list[list[int] | None] = field(default_factory=list)


def run_session(model, protocol: DuplexProtocol, entry: dict, audio: np.ndarray,
                tool_runner: Callable[[str], str] | None = tool_result, side_channel: str | None = None,
                engine: str = "auto") -> SessionOutcome:
    """One scripted session (audio (N,) float32 at 16 kHz), closed loop; `side_channel` places transcription
    segments (docs/design.md §4)."""
    drafts: list[list[int] | None] = []
    with borrowed_engine(model, engine) as eng:
        sess = DuplexSession(model, protocol, "sl-silence", clock=CostModelClock(_GENEROUS), system=entry["system"],
                             side_channel=side_channel, engine=eng)
        (results,), _ = closed_loop([sess], [split_chunks(audio, entry["n_units"], sess.chunk_samples)],
                                    tool_runner, after_idle=lambda _, s: drafts.append(s.decoder.last_main))
    return session_outcome(entry, results, drafts)


def session_outcome(entry: dict, results: list[UnitResult], drafts: list[list[int] | None]) -> SessionOutcome:
    """A session's units, silence drafts, and whether its answer and its tool calls were right."""
    out = SessionOutcome(entry["family"], results, entry["units"], drafts=drafts)
    spoken = normalize(" ".join(r.text for r in results if r.decision == "speak"))
    if entry["family"] == "short_qa" and entry.get("answer"):
        want = normalize(" ".join(u["content"] for u in entry["units"] if u["decision"] == "speak"))
        out.answer_ok = spoken == want
    if entry.get("tool_call"):
        # every call of the session, in order: a session may hold an earlier request's call before the scored one
        want = [u["content"] for u in entry["units"] if u["decision"] == "tool"]
        out.tool_ok = calls_match([r.tool_call or "" for r in results if r.decision == "tool"], want)
    return out


def calls_match(got: list[str], want: list[str]) -> bool:
    """The same calls in the same order (names and arguments compared, not spelling)."""
    return bool(got) and len(got) == len(want) and all(map(same_call, got, want))


def _rate(hits: list[bool]) -> float | None:
    return round(sum(hits) / len(hits), 4) if hits else None


# A takeover: at a unit with this tag the model decides other than the floor asks (a pause: the user is not done, so
# listen; a backchannel: the user only acknowledges, so keep speaking).
TAKEOVER_KEEPS = {"pause": "listen", "backchannel": "speak"}


def takeovers(outcome: SessionOutcome, tag: str) -> list[bool]:
    """One entry per unit of `outcome` tagged `tag` ("pause" or "backchannel"): did the model take over there?"""
    keep = TAKEOVER_KEEPS[tag]
    return [r.decision != keep for r, u in zip(outcome.units, outcome.expected) if tag in u.get("tags", [])]


def score(outcomes: list[SessionOutcome]) -> dict:
    dec, turn, barge, agree, first = [], [], [], [], []
    pause = [t for o in outcomes for t in takeovers(o, "pause")]
    bc = [t for o in outcomes for t in takeovers(o, "backchannel")]
    for o in outcomes:
        got = [r.decision for r in o.units]
        for k, (r, u) in enumerate(zip(o.units, o.expected)):
            dec.append(r.decision == u["decision"])
            tags = u.get("tags", [])
            if "turn_end" in tags:
                turn.append(any(d in ("speak", "tool") for d in got[k : k + 3]))
            if "barge_in" in tags:
                barge.append(any(d == "listen" for d in got[k : k + 3]))
            d = o.drafts[k] if k < len(o.drafts) else None
            if d is not None:
                same = d == r.tokens
                agree.append(same)
                if not same:
                    first.append(bool(d) and bool(r.tokens) and d[0] != r.tokens[0])
    return {
        "sessions": len(outcomes),
        "units": len(dec),
        "decision_acc": _rate(dec),
        "qa_exact": _rate([o.answer_ok for o in outcomes if o.answer_ok is not None]),
        "tool_exact": _rate([o.tool_ok for o in outcomes if o.tool_ok is not None]),
        "pause_takeover": _rate(pause),
        "backchannel_takeover": _rate(bc),
        "turn_response_rate": _rate(turn),
        "interruption_stop_rate": _rate(barge),
        "silence_agreement": _rate(agree),
        "first_token_share": _rate(first),
        "counts": {"pause": len(pause), "backchannel": len(bc), "turn_end": len(turn), "barge_in": len(barge),
                   "qa": sum(o.answer_ok is not None for o in outcomes),
                   "tool": sum(o.tool_ok is not None for o in outcomes)},
    }


def behaviour_vs_base(base: list[SessionOutcome], other: list[SessionOutcome]) -> dict:
    """Is behaviour preserved? Per-unit decision agreement of `other` with `base` on the same sessions
    (closed loop, so one early difference can carry on), and the change in takeover rates (points)."""
    if [o.family for o in base] != [o.family for o in other] or len(base) != len(other):
        raise ValueError("base and other must cover the same sessions in the same order")
    same = [a.decision == b.decision for o, ob in zip(other, base) for a, b in zip(o.units, ob.units)]
    sb, so = score(base), score(other)

    def delta(key: str) -> float | None:
        return None if sb[key] is None or so[key] is None else round(100 * (so[key] - sb[key]), 2)

    pairs = {tag: paired_takeovers(base, other, tag) for tag in TAKEOVER_KEEPS}
    return {"decision_agreement_with_base": _rate(same),
            "pause_takeover_delta_points": delta("pause_takeover"),
            "backchannel_takeover_delta_points": delta("backchannel_takeover"),
            **{f"{tag}_takeover_delta_ci95": takeover_delta_ci(p) for tag, p in pairs.items()},
            "takeover_discordant": {tag: discordant(p) for tag, p in pairs.items()},
            "base": {k: sb[k] for k in ("decision_acc", "pause_takeover", "backchannel_takeover",
                                        "turn_response_rate", "interruption_stop_rate")}}


Paired = list[tuple[list[bool], list[bool]]]  # per session: (the base's takeovers, the other's), unit for unit


def paired_takeovers(base: list[SessionOutcome], other: list[SessionOutcome], tag: str) -> Paired:
    """`Paired` over the units tagged `tag` of the same sessions."""
    return [(takeovers(ob, tag), takeovers(o, tag)) for ob, o in zip(base, other)]


def discordant(pairs: Paired) -> list[int]:
    """[units where only the base takes over, units where only the other does] (`pairs`: `paired_takeovers`): the
    change in takeover rate is their difference, and a sign test on the two counts says whether it leans one way."""
    units = [(a, b) for hb, ho in pairs for a, b in zip(hb, ho)]
    return [sum(a and not b for a, b in units), sum(b and not a for a, b in units)]


def takeover_delta_ci(pairs: Paired, draws: int = 2000, seed: int = 0) -> list[float] | None:
    """95 % interval of the other's takeover rate minus the base's (points; `pairs`: `paired_takeovers`), by a
    paired bootstrap over sessions (units of one session are not independent: one early difference carries on in
    the closed loop). None when no unit carries the tag."""
    n = np.array([len(hb) for hb, _ in pairs], dtype=np.float64)
    if n.sum() == 0:
        return None
    hb = np.array([sum(h) for h, _ in pairs], dtype=np.float64)
    ho = np.array([sum(h) for _, h in pairs], dtype=np.float64)
    pick = np.random.default_rng(seed).integers(0, len(n), size=(draws, len(n)))  # (draws, sessions)
    units = np.maximum(n[pick].sum(1), 1)
    deltas = 100 * (ho[pick].sum(1) - hb[pick].sum(1)) / units
    lo, hi = np.percentile(deltas, [2.5, 97.5])
    return [round(float(lo), 2), round(float(hi), 2)]


def per_family(outcomes: list[SessionOutcome]) -> dict[str, float]:
    fam: dict[str, list[bool]] = {}
    for o in outcomes:
        fam.setdefault(o.family, []).extend(r.decision == u["decision"] for r, u in zip(o.units, o.expected))
    return {f: round(sum(v) / len(v), 4) for f, v in sorted(fam.items())}


def by_minute(outcomes: list[SessionOutcome], units_per_minute: int = 60) -> list[float | None]:
    """Decision accuracy in each minute of session time, over all sessions (entry m: units
    [m * units_per_minute, (m + 1) * units_per_minute)): does behaviour hold up as a session grows?"""
    minutes: list[list[bool]] = []
    for o in outcomes:
        for k, (r, u) in enumerate(zip(o.units, o.expected)):
            m = k // units_per_minute
            minutes.extend([] for _ in range(m + 1 - len(minutes)))
            minutes[m].append(r.decision == u["decision"])
    return [_rate(v) for v in minutes]


@dataclass(frozen=True)
class EvalJob:
    """How every session of a `ticktock eval` call is run, one entry per task (`bench.workers`): a generous
    cost-model clock, so an outcome does not depend on what else the machine does."""

    model: str | None
    base: str | None  # the base model the side channel's behaviour is compared with (None: `model`)
    device: str
    side_channel: str | None  # None: off
    engine: str = "auto"
    dtype: str = "float32"

    def load(self, device: str) -> tuple[Runtime, Runtime | None]:
        """(the base runtime, the side-channel runtime or None)."""
        import torch

        from ..runtime import load_runtime

        dtype = getattr(torch, self.dtype)
        rt = load_runtime(self.base or self.model, device, dtype)
        return rt, load_runtime(self.model, device, dtype, side_channel=True) if self.side_channel else None

    def run(self, loaded: tuple[Runtime, Runtime | None], folder: str, entry: dict
            ) -> tuple[SessionOutcome, SessionOutcome | None]:
        """(the base's outcome, the side channel's or None) of one session."""
        from ..scenarios.suites import load_session

        (rt, rt_side), (_, audio) = loaded, load_session(folder, entry)
        base = run_session(rt.model, rt.protocol, entry, audio, engine=self.engine)
        if rt_side is None:
            return base, None
        return base, run_session(rt_side.model, rt_side.protocol, entry, audio, side_channel=self.side_channel,
                                 engine=self.engine)
