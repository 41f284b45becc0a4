"""`Exchange`: one user request and the model's expected reply (plus tool call, if any)."""

from __future__ import annotations

import random
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator, Sequence

# Training draws may ask in more words than the suites do (`fresh_phrasings`); off, every draw is the one
# every suite was made with.
_FRESH: ContextVar[bool] = ContextVar("fresh_phrasings", default=False)
FILLERS = ["um, ", "uh, ", "so, ", "okay, ", "hey, ", "right, ", "hmm, ", "well, ", "oh, ", "alright, "]
FILLER_P = 0.3


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


@contextmanager
def fresh_phrasings(on: bool = True) -> Iterator[None]:
    """Inside: `phrase` also draws each intent's `more` phrasings and a leading filler now and then."""
    token = _FRESH.set(on)
    try:
        yield
    finally:
        _FRESH.reset(token)


VARIANT_P = 0.5  # how often a fresh draw says a value another way ("half an hour", "half past seven")


def said(rng: random.Random, plain: str, others: Sequence[str] = ()) -> str:
    """How a value is said: `plain`, or under `fresh_phrasings` one of `others` (the same value in other words)
    half the time. Off, it draws nothing from `rng`, so the suites' scripts do not change."""
    if not _FRESH.get() or not others or rng.random() >= VARIANT_P:
        return plain
    return rng.choice(list(others))


def phrase(rng: random.Random, templates: list[str], more: Sequence[str] = (), **slots: object) -> str:
    """One of several phrasings of an intent, with its slots filled in; under `fresh_phrasings`, drawn from
    `templates` and `more`, with a filler in front three times in ten."""
    if not _FRESH.get():
        return rng.choice(templates).format(**slots)
    text = rng.choice([*templates, *more]).format(**slots)
    return rng.choice(FILLERS) + text if rng.random() < FILLER_P else text
