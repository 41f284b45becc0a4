"""The abstract plan of a session: an ordered list of events, laid out in time by `timeline.py`.

A family generator writes a `Plan` (what is said, in what order, with which behaviour);
timing comes later from word durations, so the same plan can be laid out with estimated
durations (no audio) or with the real durations of the voice that renders it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Say:
    """User or background speech, starting `gap_s` after the timeline cursor.

    role: request (ends a user turn) | part (the turn resumes after a pause) |
          barge_in (starts inside the model's speech, see Reply.interrupt_at) | chatter.
    advance: move the cursor to the end of this speech (False lets the next event overlap it).
    """

    text: str
    speaker: str = "user"
    role: str = "request"
    gap_s: float = 0.5
    word_gap_s: float = 0.06
    advance: bool = True
    voice: str = "main"
    gain_db: float = 0.0
    kind: str = "say"


@dataclass
class Backchannel:
    """A short user feedback word said while the model speaks piece `piece` (+ offset_s)."""

    text: str
    piece: int
    offset_s: float = 0.2


@dataclass
class Reply:
    """The model's answer to the user turn that just ended (timing rules 3-6 of script.py).

    call/result: a tool call made first (one unit), its result injected on the next unit.
    interrupt_at: the user barges in during this reply, after `interrupt_at` spoken pieces,
    `interrupt_offset_s` into that chunk; the next event must be a Say with role barge_in.
    """

    text: str
    call: str | None = None
    result: str | None = None
    backchannels: list[Backchannel] = field(default_factory=list)
    interrupt_at: int | None = None
    interrupt_offset_s: float = 0.2
    tags: list[str] = field(default_factory=list)
    kind: str = "reply"


@dataclass
class Noise:
    """A burst of noise ('white' | 'pink' | 'brown') at `snr_db` below the user's speech level.

    (Babble is a background `Say` in another voice at a low `gain_db`.)
    """

    color: str
    dur_s: float
    snr_db: float
    gap_s: float = 0.3
    advance: bool = True
    kind: str = "noise"


Event = Say | Reply | Noise
_KINDS = {"say": Say, "reply": Reply, "noise": Noise}


@dataclass
class Plan:
    events: list[Event]
    lead_s: float = 1.5
    tail_units: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"lead_s": self.lead_s, "tail_units": self.tail_units,
                "events": [asdict(e) for e in self.events]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Plan":
        events: list[Event] = []
        for e in d["events"]:
            e = dict(e)
            if e["kind"] == "reply":
                e["backchannels"] = [Backchannel(**b) for b in e.get("backchannels", [])]
            events.append(_KINDS[e["kind"]](**e))
        return cls(events=events, lead_s=d["lead_s"], tail_units=d["tail_units"])
