"""`Exchange`: one user request and the model's expected reply (plus tool call, if any)."""

from __future__ import annotations

import random
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Sequence

from .shapes import Shapes

# Training draws may ask in more words than the suites do (`fresh_phrasings`; the value is the share of requests
# composed from parts); off (None), every draw is the one every suite was made with.
_FRESH: ContextVar[float | None] = ContextVar("fresh_phrasings", default=None)
_BY_FORM: ContextVar[bool] = ContextVar("by_form", default=False)  # composed draws weigh each form alike
COMPOSED_SHARE = 0.5  # how often a fresh draw is a composed request (`shapes`) where the intent has them
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
def fresh_phrasings(on: bool = True, composed_share: float = COMPOSED_SHARE, by_form: bool = False) -> Iterator[None]:
    """Inside: `phrase` also draws each intent's `more` phrasings, requests composed from parts (`composed_share`
    of the draws where the intent has them), lead-ins, tails and a leading filler now and then. `by_form`: a
    composed request is drawn form first, then a sentence of that form (`shapes.Shapes`), so a form written as a
    few whole sentences is asked as often as one of hundreds of frame products."""
    if not 0.0 <= composed_share <= 1.0:
        raise ValueError(f"composed_share must be within [0, 1], not {composed_share}")
    token, form_token = _FRESH.set(composed_share if on else None), _BY_FORM.set(by_form)
    try:
        yield
    finally:
        _FRESH.reset(token)
        _BY_FORM.reset(form_token)


VARIANT_P = 0.5  # how often a fresh draw says a value another way ("half an hour", "half past seven")


def said(rng: random.Random, plain: str, others: Sequence[str] = ()) -> str:
    """How a value is said: `plain`, or under `fresh_phrasings` one of `others` (the same value in other words)
    half the time. Off, it draws nothing from `rng`, so the suites' scripts do not change."""
    if _FRESH.get() is None or not others or rng.random() >= VARIANT_P:
        return plain
    return rng.choice(list(others))


def phrase(rng: random.Random, templates: list[str], more: Sequence[str] = (), composed: Sequence[str] = (),
           **slots: object) -> str:
    """One of several phrasings of an intent, with its slots filled in; under `fresh_phrasings`, drawn from
    `composed` (`shapes`: the intent asked in many sentence shapes; by form where the context says so) the context's
    composed share of the time, else from `templates` and `more`, then `framed`, and with a filler in front three
    times in ten."""
    share = _FRESH.get()
    if share is None:
        return rng.choice(templates).format(**slots)
    for _ in range(1000):  # a draw that says a held-out request is drawn again (rare: the suite's are not templates)
        pool = composed if composed and rng.random() < share else [*templates, *more]
        if pool is composed and _BY_FORM.get() and isinstance(composed, Shapes):
            pool = rng.choice(composed.forms)
        text = framed(rng, rng.choice(pool).format(**slots))
        text = rng.choice(FILLERS) + text if rng.random() < FILLER_P else text
        if not _cores(text) & _held_out():
            return text
    raise ValueError(f"every draw of {templates[0]!r} and its kin says a `phrasings` request")


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


# what `phrase` and `framed` may put around a request, in words, in the order `_cores` takes it off
_FRAMING_WORDS = [([_words(w) for w in words], at_end)
                  for words, at_end in ((FILLERS, False), (LEADS, False), ([*TAILS["?"], *TAILS[""]], True))]


@lru_cache(maxsize=1)
def _held_out() -> frozenset[str]:
    """The `phrasings` suite's requests (words only): training never says one, nor one of them framed."""
    from ..phrasings import PHRASINGS  # here, not at the top: the suite builds its exchanges from the intents

    return frozenset(_words(ex.text) for _, ex in PHRASINGS)


def _cores(text: str) -> set[str]:
    """`text` in words, and without its leading filler, its lead-in and its tail, one after the other."""
    cores = [_words(text)]
    for parts, at_end in _FRAMING_WORDS:
        t = cores[-1]
        part = next((w for w in parts if (t.endswith(" " + w) if at_end else t.startswith(w + " "))), "")
        cores.append((t[:len(t) - len(part)] if at_end else t[len(part):]).strip())
    return set(cores)


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
