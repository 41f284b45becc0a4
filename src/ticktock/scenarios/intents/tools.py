"""Tool requests: flights, weather, timers, currency, tables; some with self-corrections; two at once.

A self-correction says a wrong value first and fixes it ("from tokyo, no, osaka"); the
expected call always carries the corrected value.
"""

from __future__ import annotations

import random

from ..text import number_words
from ..world import (CITIES, CITY_BY_CODE, CODE_DAY, CURRENCIES, DAY_CODE, DAYS, RESTAURANTS, format_call,
                     format_calls, run_tool)
from .shapes import CURRENCY_CONVERT_SHAPES, FLIGHTS_SHAPES, TABLE_SHAPES, TIMER_SHAPES, WEATHER_SHAPES
from .exchange import Exchange, phrase, said

CORRECTIONS = ["{w}, no, {r}", "{w}, sorry, i mean {r}", "{w}, no wait, {r}", "{w}, actually, {r}"]
TIMER_MINUTES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 45, 60, 90]
AMOUNTS = [5, 10, 20, 25, 50, 100, 200, 500, 1000]
# values in other words, for fresh phrasings (`said`): what a user says beside "fifteen minutes", "one hundred"
DURATIONS = {15: ["a quarter of an hour", "a quarter hour"], 30: ["half an hour", "a half hour"],
             45: ["three quarters of an hour"], 60: ["an hour", "one hour"], 90: ["an hour and a half"]}
AMOUNT_WORDS = {100: ["a hundred"], 1000: ["a thousand"]}


class Slots:
    """Fills the `n` slots of a request in order; with probability `p_correct` one of them,
    chosen at random, is said wrong first and then corrected."""

    def __init__(self, rng: random.Random, p_correct: float, n: int) -> None:
        self.rng = rng
        self.target = rng.randrange(n) if rng.random() < p_correct else -1
        self.i = 0

    def say(self, right: str, pool: list[str]) -> str:
        """The spoken slot value: `right`, or for the chosen slot 'wrong, no, right'."""
        i, self.i = self.i, self.i + 1
        if i != self.target:
            return right
        wrong = self.rng.choice([p for p in pool if p != right])
        return self.rng.choice(CORRECTIONS).format(w=wrong, r=right)


def confirm(name: str, args: dict, result: str) -> str:
    """The spoken confirmation the model is trained to give once tool `name` called with `args` returned `result`."""
    if name == "find_flights":
        flight, rest = result.split(" at ")
        time, price = rest.split(", ")
        return f"i found {flight} at {time} for {price}."
    if name == "get_weather":
        return f"on {CODE_DAY[args['day']]}, {CITY_BY_CODE[args['city']].name} will be {result}."
    if name == "set_timer":
        n = args["minutes"]
        return f"okay, your timer is set for {n} {'minute' if n == 1 else 'minutes'}."
    if name == "convert_currency":
        value = result.split(" is ")[1].split()[0]
        return f"{args['amount']} {CURRENCIES[args['src']][1]} is {value} {CURRENCIES[args['dst']][1]}."
    if name == "book_table":
        return f"your table for {args['people']} at {args['restaurant']} at {args['time']} is {result}."
    raise ValueError(f"unknown tool {name!r}")


def tool_exchange(req: str, name: str, **kwargs: object) -> Exchange:
    """A request for one tool call: the call, the mock tool's result and the trained confirmation."""
    call = format_call(name, **kwargs)
    result = run_tool(call)
    return Exchange(req, confirm(name, kwargs, result), call=call, result=result, intent=name)


def flights(rng: random.Random, p_correct: float = 0.35) -> Exchange:
    o, d = rng.sample(CITIES, 2)
    day = rng.choice(DAYS)
    s = Slots(rng, p_correct, 3)
    others = [c.name for c in CITIES if c not in (o, d)]
    slots = dict(o=s.say(o.name, others), d=s.say(d.name, others), day=s.say(day, DAYS))
    req = phrase(rng, ["book me a flight | from {o} to {d} | on {day}.",
                       "i need a flight from {o} | to {d} on {day}.",
                       "can you find flights | from {o} to {d} | for {day}?",
                       "please look for a flight to {d} | from {o} on {day}.",
                       "are there any flights on {day} | from {o} to {d}?",
                       "i want to fly from {o} | to {d} this {day}."],
               composed=FLIGHTS_SHAPES,
               more=["on {day}, | i need to fly | from {o} to {d}.", "find me a flight to {d} | leaving {o} | on {day}.", "flights from {o} | to {d}, | {day} please.", "could you look up flights | from {o} to {d} | on {day}?"], **slots)
    return tool_exchange(req, "find_flights", origin=o.code, dest=d.code, day=DAY_CODE[day])


def weather(rng: random.Random, p_correct: float = 0.35) -> Exchange:
    city, day = rng.choice(CITIES), rng.choice(DAYS)
    s = Slots(rng, p_correct, 2)
    slots = dict(c=s.say(city.name, [c.name for c in CITIES]), day=s.say(day, DAYS))
    req = phrase(rng, ["what's the weather | in {c} on {day}?", "will it rain in {c} | on {day}?",
                       "how is the weather going to be | in {c} on {day}?",
                       "tell me the weather for {c} | on {day}.",
                       "check the weather in {c} | for {day} please."],
               composed=WEATHER_SHAPES,
               more=["on {day}, | what will the weather be in {c}?", "{c} on {day}, | what's the weather like?", "could you check the forecast | for {c} on {day}?", "is it going to rain | in {c} on {day}?"], **slots)
    return tool_exchange(req, "get_weather", city=city.code, day=DAY_CODE[day])


def timer(rng: random.Random, p_correct: float = 0.35) -> Exchange:
    n = rng.choice(TIMER_MINUTES)
    s = Slots(rng, p_correct, 1)
    spoken = s.say(number_words(n), [number_words(m) for m in TIMER_MINUTES])
    dur = f"{spoken} minutes"
    if spoken == number_words(n):  # not corrected
        dur = said(rng, dur, DURATIONS.get(n, ()))
    a_n = f"{'an' if spoken.startswith(('eight', 'eleven')) else 'a'} {spoken}"  # "an eight minute timer"
    req = phrase(rng, ["set a timer | for {d}.", "please start a timer | for {d}.",
                       "can you set a timer | for {d}?", "i need a timer, | {d} please.",
                       "remind me | in {d}."],
               composed=TIMER_SHAPES,
               more=["{d}, | set a timer please.", "could you time | {d} for me?", "start {a_n} minute | timer.", "a timer for {d}, | please."], a_n=a_n, d=dur)
    return tool_exchange(req, "set_timer", minutes=n)


def currency(rng: random.Random, p_correct: float = 0.35) -> Exchange:
    src, dst = rng.sample(list(CURRENCIES), 2)
    amt = rng.choice(AMOUNTS)
    s = Slots(rng, p_correct, 2)
    plurals = [v[1] for v in CURRENCIES.values()]
    slots = dict(a=said(rng, number_words(amt), AMOUNT_WORDS.get(amt, ())), s=s.say(CURRENCIES[src][1], plurals),
                 d=s.say(CURRENCIES[dst][1], plurals))
    req = phrase(rng, ["how much is {a} {s} | in {d}?", "convert {a} {s} | to {d}.",
                       "what are {a} {s} | worth in {d}?", "change {a} {s} | into {d} please."],
               composed=CURRENCY_CONVERT_SHAPES,
               more=["{a} {s}, | how much is that in {d}?", "what would {a} {s} | be in {d}?", "could you convert {a} {s} | into {d}?", "in {d}, | what are {a} {s} worth?"], **slots)
    return tool_exchange(req, "convert_currency", amount=amt, src=src, dst=dst)


def _spoken_time(hour: int, minute: int) -> str:
    return f"{number_words(hour - 12)}{' thirty' if minute else ''} pm"


def _times_said(hour: int, minute: int) -> list[str]:
    """An evening time (hour 13-23) in other words than `_spoken_time`'s."""
    h = number_words(hour - 12)
    if minute:
        return [f"{h} thirty in the evening", f"half past {h}", f"half past {h} in the evening"]
    return [f"{h} o'clock", f"{h} in the evening", f"{h} tonight"]


def _people_said(people: int) -> list[str]:
    """A party's size in other words than "N people"."""
    if people == 1:
        return ["just me", "myself"]
    p = number_words(people)
    return [f"{p} of us", f"the {p} of us", f"a party of {p}"]


def table(rng: random.Random, p_correct: float = 0.35) -> Exchange:
    rest, people = rng.choice(RESTAURANTS), rng.randint(1, 8)
    hour, minute = rng.randint(17, 21), rng.choice([0, 30])
    s = Slots(rng, p_correct, 2)
    p_words = s.say(number_words(people), [number_words(i) for i in range(1, 9)])
    times = [_spoken_time(h, m) for h in range(17, 22) for m in (0, 30)]
    t_words = s.say(_spoken_time(hour, minute), times)
    if t_words == _spoken_time(hour, minute):  # not corrected
        t_words = said(rng, t_words, _times_said(hour, minute))
    party = f"{p_words} {'person' if people == 1 else 'people'}"
    if p_words == number_words(people):
        party = said(rng, party, _people_said(people))
    slots = dict(r=rest, p=p_words, t=t_words, party=party)
    req = phrase(rng, ["book a table | for {party} at {r} | at {t}.",
                       "i'd like a table at {r} | for {party} at {t}.",
                       "can you reserve a table for {p} | at {r}, at {t}?",
                       "please get us a table at {r} | at {t} for {party}."],
               composed=TABLE_SHAPES,
               more=["at {t}, | a table for {party} | at {r} please.", "could we get a table at {r} | at {t} | for {party}?", "reserve {r} | for {party} at {t}.", "a table for {party} | at {r}, | {t}."], **slots)
    time = f"{hour}:{minute:02d}"
    return tool_exchange(req, "book_table", restaurant=rest, people=people, time=time)


ONE_PER_TOOL = [flights, weather, timer, currency, table]
INTENTS = [flights, *ONE_PER_TOOL]  # flights twice (three slots to fill)


def tool_request(rng: random.Random, p_correct: float = 0.35) -> Exchange:
    """A random tool request; with probability `p_correct` one slot is self-corrected."""
    return rng.choice(INTENTS)(rng, p_correct)


PAIR_JOINS = [", and ", ", and also ", ". also, ", ", and then "]


def tool_pair_request(rng: random.Random, p_correct: float = 0.2) -> Exchange:
    """Two requests for different tools in one breath ("set a timer for ten minutes, and what's the
    weather in paris on friday?"), answered by one tool unit holding both calls as a JSON list (parallel
    function calling; 78-115 tokens) and one reply confirming both. Each of the two self-corrects a slot
    with probability `p_correct` / 2."""
    first, second = rng.sample(ONE_PER_TOOL, 2)
    a, b = first(rng, p_correct / 2), second(rng, p_correct / 2)
    request = f"{a.request.rstrip('.?!')}{rng.choice(PAIR_JOINS)}| {b.request}"
    call = format_calls([a.call, b.call])
    return Exchange(request, f"{a.reply} {b.reply}", call=call, result=run_tool(call), intent="tool_pair")
