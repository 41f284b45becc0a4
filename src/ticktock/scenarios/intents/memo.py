"""Dictation: lists, codes, meetings and names the user asks about later (recall)."""

from __future__ import annotations

import random

from ..text import ORDINALS, digits_words, number_words
from ..world import DAYS
from .exchange import Memo, phrase
from .reasoning import NAMES

GROCERIES = ("apples bananas bread butter cheese eggs milk rice pasta tomatoes onions carrots "
             "potatoes chicken fish beans coffee tea sugar salt flour yogurt lettuce lemons "
             "oranges grapes honey juice soap cereal").split()
CODES = ["locker", "door", "gate", "bike lock", "safe", "garage"]
GROUPS = [("friends", "friend"), ("cousins", "cousin"), ("guests", "guest"), ("team mates", "team mate")]
ACKS = ["okay, i will remember that.", "got it, i noted that.", "okay, noted."]


def _and_list(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1]


def _ordinal_questions(rng: random.Random, items: list[str], noun: str, k: int) -> list[tuple[str, str]]:
    out = []
    for i in rng.sample(range(len(items)), k):
        o = ORDINALS[i]
        q = phrase(rng, ["what was the {o} {n}?", "which {n} came {o}?",
                         "tell me the {o} {n} again.", "what was {n} number {k}?"],
                   o=o, n=noun, k=number_words(i + 1))
        out.append((q, f"the {o} {noun} was {items[i]}."))
    return out


def shopping_list(rng: random.Random) -> Memo:
    items = rng.sample(GROCERIES, rng.randint(3, 7))
    req = phrase(rng, ["here is my shopping list: {l}.", "please remember my shopping list: {l}.",
                       "i need to buy {l}.", "note these items for me: {l}.",
                       "add these to my list: {l}."], l=_and_list(items))
    qs = _ordinal_questions(rng, items, "item", min(2, len(items)))
    qs.append((phrase(rng, ["how many items are on my list?", "how many things do i need to buy?",
                            "how long is my shopping list?", "how many items did i give you?"]),
               f"there are {len(items)} items on your list."))
    qs.append((phrase(rng, ["what was the last item?", "what was the last thing on my list?",
                            "which item did i say last?", "tell me the last item."]),
               f"the last item was {items[-1]}."))
    return Memo(req, f"okay, i noted {len(items)} items.", qs, intent="shopping_list")


def code(rng: random.Random) -> Memo:
    kind = rng.choice(CODES)
    digits = "".join(str(rng.randrange(10)) for _ in range(rng.randint(3, 5)))
    req = phrase(rng, ["my {k} code is {d}.", "please remember my {k} code, it is {d}.",
                       "the {k} code is {d}.", "note this down, the {k} code is {d}."],
                 k=kind, d=digits_words(digits))
    q = phrase(rng, ["what is my {k} code?", "what was the {k} code?", "tell me the {k} code again.",
                     "can you remind me of the {k} code?"], k=kind)
    return Memo(req, rng.choice(ACKS), [(q, f"the {kind} code is {' '.join(digits)}.")], intent="code",
                subject=f"code:{kind}")


def meeting(rng: random.Random) -> Memo:
    name, day, hour, room = rng.choice(NAMES), rng.choice(DAYS), rng.randint(1, 11), rng.randint(1, 40)
    req = phrase(rng, ["i have a meeting with {n} on {d} at {h} in room {r}.",
                       "remember that i meet {n} on {d} at {h}, in room {r}.",
                       "my meeting with {n} is on {d}, at {h}, in room {r}.",
                       "please note a meeting with {n}, {d} at {h}, room {r}."],
                 n=name, d=day, h=number_words(hour), r=number_words(room))
    qs = [(phrase(rng, ["who is my meeting with?", "who am i meeting?", "who is the meeting with?",
                        "remind me who i am meeting."]), f"your meeting is with {name}."),
          (phrase(rng, ["what day is my meeting?", "when is my meeting?", "which day is the meeting?",
                        "on what day do i meet {n}?"], n=name), f"your meeting is on {day}."),
          (phrase(rng, ["what room is the meeting in?", "where is my meeting?",
                        "which room is my meeting in?", "in what room do i meet {n}?"], n=name),
           f"the meeting is in room {room}."),
          (phrase(rng, ["what time is my meeting?", "at what time do i meet {n}?",
                        "when on {d} is my meeting?", "what hour is the meeting?"], n=name, d=day),
           f"your meeting is at {hour}.")]
    return Memo(req, rng.choice(ACKS), rng.sample(qs, rng.randint(1, 2)), intent="meeting")


def names(rng: random.Random) -> Memo:
    group, one = rng.choice(GROUPS)
    people = rng.sample(NAMES, rng.randint(3, 5))
    req = phrase(rng, ["my {g} are {l}.", "please remember my {g}: {l}.", "the {g} are {l}.",
                       "note the names of my {g}: {l}."], g=group, l=_and_list(people))
    qs = _ordinal_questions(rng, people, "name", 1)
    return Memo(req, f"okay, i noted {len(people)} {group}.", qs, intent="names")


INTENTS = [shopping_list, shopping_list, code, meeting, names]


def dictation(rng: random.Random) -> Memo:
    return rng.choice(INTENTS)(rng)
