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
# Ways into and out of any request (fresh phrasings): they name no intent and no value, so what the request asks
# moves within the sentence and the model must find it there, not at a template's place.
LEADS = ["i have a question, ", "can you help me, ", "tell me something, ", "i'd like to know, ", "one more thing, ",
         "i was wondering, ", "let me ask you, ", "excuse me, ", "sorry, ", "now, ", "listen, ", "hello, "]
TAILS = {"?": ["do you know", "if you know", "please", "thanks"], "": ["please", "for me", "if you can", "thanks"]}
FRAME_P = 0.25


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
    `templates` and `more`, `framed`, and with a filler in front three times in ten."""
    if not _FRESH.get():
        return rng.choice(templates).format(**slots)
    text = framed(rng, rng.choice([*templates, *more]).format(**slots))
    return rng.choice(FILLERS) + text if rng.random() < FILLER_P else text


def framed(rng: random.Random, text: str) -> str:
    """`text` with a lead-in (`LEADS`) and a tail (`TAILS`: a question's or a request's, before the closing mark),
    each FRAME_P of the time."""
    if rng.random() < FRAME_P:
        text = rng.choice(LEADS) + text
    if rng.random() < FRAME_P:
        body, mark = (text[:-1], text[-1]) if text[-1:] in "?.!" else (text, "")
        tail = rng.choice(TAILS["?" if mark == "?" else ""])
        text = text if tail in body else f"{body}, {tail}{mark}"
    return text
