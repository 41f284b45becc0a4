"""`Exchange`: one user request and the model's expected reply (plus tool call, if any)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Exchange:
    """A request/reply pair. `request` may hold `|` marks at natural mid-sentence pause points
    (used by the pause-handling family); `text` is the request without them."""

    request: str
    reply: str
    call: str | None = None
    result: str | None = None
    intent: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.request.replace("|", " ").split())

    @property
    def pause_points(self) -> int:
        return self.request.count("|")

    def split(self, rng: random.Random, n: int = 1) -> list[str]:
        """The request cut at `n` random `|` marks into n+1 parts; ValueError if too few marks."""
        parts = self.request.split("|")
        if len(parts) <= n:
            raise ValueError(f"fewer than {n} pause points in {self.request!r}")
        cuts = sorted(rng.sample(range(1, len(parts)), n))
        bounds = [0, *cuts, len(parts)]
        return [" ".join("".join(parts[a:b]).split()) for a, b in zip(bounds, bounds[1:])]


@dataclass
class Memo:
    """A dictated piece of information, its acknowledgement and questions about it later."""

    request: str
    ack: str
    questions: list[tuple[str, str]] = field(default_factory=list)  # (question, answer)
    intent: str = ""
    subject: str = ""  # what the questions ask about (default: the intent); a later memo on it replaces this one

    def __post_init__(self) -> None:
        self.subject = self.subject or self.intent


def phrase(rng: random.Random, templates: list[str], **slots: object) -> str:
    """One of several phrasings of an intent, with its slots filled in."""
    return rng.choice(templates).format(**slots)
