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

    def split(self, rng: random.Random) -> tuple[str, str]:
        """The request cut at one random `|` mark: (before, after); ValueError if it has none."""
        parts = self.request.split("|")
        if len(parts) < 2:
            raise ValueError(f"no pause point in {self.request!r}")
        i = rng.randrange(1, len(parts))
        clean = lambda s: " ".join(s.replace("|", " ").split())  # noqa: E731
        return clean("".join(parts[:i])), clean("".join(parts[i:]))


@dataclass
class Memo:
    """A dictated piece of information, its acknowledgement and questions about it later."""

    request: str
    ack: str
    questions: list[tuple[str, str]] = field(default_factory=list)  # (question, answer)
    intent: str = ""


def phrase(rng: random.Random, templates: list[str], **slots: object) -> str:
    """One of several phrasings of an intent, with its slots filled in."""
    return rng.choice(templates).format(**slots)
