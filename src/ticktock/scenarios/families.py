"""The nine task families of docs/design.md §5 (plus long sessions): `family(rng) -> Script`.

Each family composes intents (what is asked) with a behaviour (how the turn unfolds:
pauses, backchannels, barge-ins, background talkers, tool calls, recall).
"""

from __future__ import annotations

import random
from typing import Callable

from .compose import BACKCHANNELS, answer, make_script, turn, user
from .intents.exchange import Exchange
from .intents.explain import long_request
from .intents.memo import dictation
from .intents.qa import short_question
from .intents.reasoning import word_problem
from .intents.tools import tool_pair_request, tool_request
from .plan import Backchannel, Event, Noise, Plan, Reply, Say
from .script import Script
from .text import speech_pieces
from .timeline import layout

PAUSE_S = (1.2, 3.0)  # a mid-sentence user pause
BARGE_OFFSET_S = (0.05, 0.4)  # how far into its chunk a barge-in starts
BACKGROUND_GAIN_DB = (-20.0, -10.0)  # a background talker relative to the user
NOISE_SNR_DB = (0.0, 12.0)  # a noise burst relative to the user's speech
NOISE_COLORS = ("white", "pink", "brown")
BARGE_PREFIXES = ["wait,", "sorry,", "hold on,", "actually,", "stop,", "excuse me,", "no no,", ""]
STOPS = ["stop, please.", "okay, stop.", "wait, stop.", "that's enough, thanks."]
CHATTER = ["did you see the game last night?", "i think we should leave at six.",
           "can you pass me the salt?", "the bus is late again.", "where did i put my keys?",
           "let's have pizza for dinner.", "it is so cold in here.", "my phone is almost dead.",
           "are you coming to the party on friday?", "turn the music down a bit.",
           "i will call you back later.", "the meeting moved to monday.",
           "we need more milk and bread.", "look at that dog over there."]


def _mixed_request(rng: random.Random) -> Exchange:
    """A request of any short kind: question, word problem or tool request."""
    return rng.choice([short_question, short_question, word_problem, tool_request])(rng)


def short_qa(rng: random.Random) -> Script:
    events: list[Event] = []
    for _ in range(rng.choice([1, 1, 2]) - 1):
        events += turn(rng, short_question(rng))
    ex = short_question(rng)
    return make_script(rng, "short_qa", events + turn(rng, ex, ["answer"]), answer=ex.reply)


def long_answer(rng: random.Random) -> Script:
    events = turn(rng, short_question(rng)) if rng.random() < 0.25 else []
    ex = long_request(rng)
    return make_script(rng, "long_answer", events + turn(rng, ex, ["answer"]), answer=ex.reply)


def reasoning(rng: random.Random) -> Script:
    ex = word_problem(rng)
    return make_script(rng, "reasoning", turn(rng, ex, ["answer"]), answer=ex.reply)


def pause_handling(rng: random.Random) -> Script:
    ex = _mixed_request(rng)
    n = 2 if ex.pause_points >= 2 and rng.random() < 0.3 else 1
    parts = ex.split(rng, n)
    events: list[Event] = [user(rng, parts[0], role="part")]
    for i, part in enumerate(parts[1:], 1):
        role = "request" if i == len(parts) - 1 else "part"
        events.append(user(rng, part, role=role, gap_s=rng.uniform(*PAUSE_S)))
    events.append(answer(ex, ["answer"]))
    return make_script(rng, "pause_handling", events, answer=ex.reply, tool_call=ex.call)


def backchannel(rng: random.Random) -> Script:
    ex = long_request(rng)
    n_pieces = len(speech_pieces(ex.reply))
    slots = list(range(0, max(1, n_pieces - 2), 2))  # spaced, and early enough to end mid-reply
    bcs = [Backchannel(rng.choice(BACKCHANNELS), p, round(rng.uniform(0.1, 0.5), 3))
           for p in sorted(rng.sample(slots, min(len(slots), rng.randint(1, 2))))]
    events = [user(rng, ex.text), answer(ex, ["answer"], backchannels=bcs)]
    return make_script(rng, "backchannel", events, answer=ex.reply)


def interruption(rng: random.Random) -> Script:
    first = long_request(rng)
    j = rng.randint(1, len(speech_pieces(first.reply)) - 2)
    cut = answer(first, interrupt_at=j, interrupt_offset_s=round(rng.uniform(*BARGE_OFFSET_S), 3))
    if rng.random() < 0.15:
        new = Exchange(rng.choice(STOPS), "okay.", intent="stop")
        barge = new.text
    else:
        new = _mixed_request(rng)
        barge = f"{rng.choice(BARGE_PREFIXES)} {new.text}".strip()
    events = [user(rng, first.text), cut, user(rng, barge, role="barge_in"), answer(new, ["answer"])]
    return make_script(rng, "interruption", events, answer=new.reply, tool_call=new.call)


def _distraction(rng: random.Random, advance: bool = True) -> Event:
    """A background talker (chatter or someone else's question) or a noise burst."""
    if rng.random() < 0.35:
        return Noise(rng.choice(NOISE_COLORS), round(rng.uniform(1.0, 3.0), 3),
                     round(rng.uniform(*NOISE_SNR_DB), 1), gap_s=round(rng.uniform(0.2, 1.0), 3),
                     advance=advance)
    text = rng.choice(CHATTER) if rng.random() < 0.6 else _mixed_request(rng).text
    return Say(text, speaker="background", role="chatter", gap_s=round(rng.uniform(0.2, 1.0), 3),
               word_gap_s=round(rng.uniform(0.03, 0.1), 3), advance=advance, voice="other",
               gain_db=round(rng.uniform(*BACKGROUND_GAIN_DB), 1))


def background(rng: random.Random) -> Script:
    events = [_distraction(rng) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.2:  # nobody talks to the model at all
        return make_script(rng, "background", events + [_distraction(rng)])
    ex = _mixed_request(rng)
    if rng.random() < 0.4:  # the distraction overlaps the user's request
        events.append(_distraction(rng, advance=False))
    events += turn(rng, ex, ["answer"])
    if rng.random() < 0.3:
        events.append(_distraction(rng))
    return make_script(rng, "background", events, answer=ex.reply, tool_call=ex.call)


def tool_call(rng: random.Random) -> Script:
    events: list[Event] = []
    if rng.random() < 0.2:
        events += turn(rng, tool_request(rng, 0.0))
    ex = tool_request(rng, p_correct=0.4)
    return make_script(rng, "tool_call", events + turn(rng, ex, ["answer"]), answer=ex.reply,
                       tool_call=ex.call)


def tool_pair(rng: random.Random) -> Script:
    """Two tools asked for at once: one tool unit holds both calls (a JSON list; 80-117 tokens with the
    decision and terminator). Not one of the nine round-robin families: the `pairs` suite, the 40
    sessions appended to `full`, and training draw it."""
    ex = tool_pair_request(rng)
    return make_script(rng, "tool_pair", turn(rng, ex, ["answer"]), answer=ex.reply, tool_call=ex.call)


def dictation_recall(rng: random.Random) -> Script:
    memos = [dictation(rng) for _ in range(rng.randint(1, 2))]
    events: list[Event] = []
    for m in memos:
        events += [user(rng, m.request), Reply(m.ack)]
    if rng.random() < 0.4:
        events += turn(rng, short_question(rng))
    pool = [qa for m in memos for qa in m.questions]
    asked = rng.sample(pool, min(len(pool), rng.randint(1, 3)))
    for q, a in asked:
        events += [user(rng, q), Reply(a, tags=["recall"])]
    return make_script(rng, "dictation_recall", events, recall=asked)


def long_session(rng: random.Random, minutes: float | None = None) -> Script:
    """5-10 minutes of dictation and conversation (every kind of turn), then recall questions."""
    target_s = 60 * (minutes if minutes is not None else rng.uniform(5, 10))
    events: list[Event] = []
    latest: dict[str, list[tuple[str, str]]] = {}  # subject -> its latest memo's questions
    while layout(Plan(events)).n_units < target_s:
        kind = rng.choice(["memo", "memo", "qa", "tool", "long", "reason", "pause", "background"])
        if kind == "memo":
            m = dictation(rng)
            events += [user(rng, m.request), Reply(m.ack)]
            # "what was the first item?" after two shopping lists asks about the newer one
            latest[m.subject] = m.questions
        elif kind == "pause":
            ex = _mixed_request(rng)
            a, b = ex.split(rng)
            events += [user(rng, a, role="part"), user(rng, b, gap_s=rng.uniform(*PAUSE_S)), answer(ex)]
        elif kind == "background":
            events.append(_distraction(rng))
        else:
            gen = {"qa": short_question, "tool": tool_request, "long": long_request,
                   "reason": word_problem}[kind]
            events += turn(rng, gen(rng))
    pool = [qa for qs in latest.values() for qa in qs]
    asked = rng.sample(pool, min(len(pool), rng.randint(3, 6)))
    for q, a in asked:
        events += [user(rng, q), Reply(a, tags=["recall"])]
    return make_script(rng, "long", events, recall=asked)


FAMILIES: dict[str, Callable[[random.Random], Script]] = {
    f.__name__: f for f in (short_qa, long_answer, reasoning, pause_handling, backchannel,
                            interruption, background, tool_call, dictation_recall)
}
