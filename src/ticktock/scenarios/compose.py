"""Building blocks the family generators share: system prompts, turns, and Script assembly."""

from __future__ import annotations

import random
from typing import Iterable

from .intents.exchange import Exchange
from .plan import Event, Plan, Reply, Say
from .script import Script
from .timeline import realize
from .world import TOOLS

SYSTEM_PROMPTS = [
    "you are a helpful voice assistant. answer briefly.",
    "you are a friendly assistant on a phone call. keep answers short.",
    "you are a voice assistant. listen carefully and answer in a few words.",
    "you are a helpful assistant. speak clearly and do not interrupt the user.",
    "you are a travel and kitchen helper. be short and polite.",
]
TOOLS_LINE = "tools: " + ", ".join(TOOLS) + "."
# A system prompt the model was trained with (every session draws one of SYSTEM_PROMPTS + TOOLS_LINE): the
# default where nothing else says which (`ticktock demo`).
DEFAULT_SYSTEM_PROMPT = f"{SYSTEM_PROMPTS[0]} {TOOLS_LINE}"
BACKCHANNELS = ["uh-huh", "mm-hmm", "yeah", "okay", "right", "i see", "sure", "got it"]
LEAD_S = (1.0, 2.0)  # leading silence
TAIL_UNITS = (1, 2)  # listen units after everything
TURN_GAP_S = (0.3, 1.2)  # silence before a user turn
WORD_GAP_S = (0.03, 0.10)  # silence between a user's words


def system_prompt(rng: random.Random) -> str:
    """A system prompt; all families share the pool, so it does not reveal the family."""
    return f"{rng.choice(SYSTEM_PROMPTS)} {TOOLS_LINE}"


def user(rng: random.Random, text: str, role: str = "request", gap_s: float | None = None) -> Say:
    gap = rng.uniform(*TURN_GAP_S) if gap_s is None else gap_s
    return Say(text, role=role, gap_s=round(gap, 3), word_gap_s=round(rng.uniform(*WORD_GAP_S), 3))


def answer(ex: Exchange, tags: Iterable[str] = (), **kw: object) -> Reply:
    return Reply(ex.reply, call=ex.call, result=ex.result, tags=list(tags), **kw)


def turn(rng: random.Random, ex: Exchange, tags: Iterable[str] = ()) -> list[Event]:
    """The user asks `ex`, the model replies (with its tool call, if any)."""
    return [user(rng, ex.text), answer(ex, tags)]


def make_script(rng: random.Random, family: str, events: list[Event], *, answer: str | None = None,
                tool_call: str | None = None, recall: Iterable[tuple[str, str]] = ()) -> Script:
    """Wrap events into a Plan and lay it out with estimated word durations."""
    plan = Plan(events, lead_s=round(rng.uniform(*LEAD_S), 3), tail_units=rng.randint(*TAIL_UNITS))
    script = Script(id=f"{family}-{rng.getrandbits(32):08x}", family=family, system=system_prompt(rng),
                    utterances=[], units=[], answer=answer, tool_call=tool_call,
                    recall=[{"question": q, "answer": a} for q, a in recall], plan=plan.to_dict())
    return realize(script)[0]
