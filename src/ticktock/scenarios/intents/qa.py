"""Short closed-domain questions: capitals, currencies, languages, arithmetic, colours, dates."""

from __future__ import annotations

import random

from ..text import number_words
from ..world import COLOURS, COUNTRIES, DAYS, MONTH_DAYS, MONTHS
from .exchange import Exchange, phrase

OPS = {"plus": lambda a, b: a + b, "minus": lambda a, b: a - b, "times": lambda a, b: a * b}
TIME_UNITS = [("seconds", "minute", 60), ("minutes", "hour", 60), ("hours", "day", 24),
              ("days", "week", 7), ("months", "year", 12), ("weeks", "year", 52)]


def capital(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["what is the capital of | {c}?", "do you know the capital | of {c}?",
                     "tell me the capital | of {c}.", "which city is the capital | of {c}?",
                     "what's the capital city | of {c}?"], c=c.name)
    return Exchange(q, f"the capital of {c.name} is {c.capital}.", intent="capital")


def currency(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["what currency | do they use in {c}?", "what is the currency | of {c}?",
                     "what money do people use | in {c}?", "which currency is used | in {c}?"],
               c=c.name)
    return Exchange(q, f"in {c.name} they use the {c.currency}.", intent="currency")


def language(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["what language do they speak | in {c}?", "which language is spoken | in {c}?",
                     "what do people speak | in {c}?", "what is the main language | of {c}?"],
               c=c.name)
    return Exchange(q, f"people in {c.name} speak {c.language}.", intent="language")


def continent(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["on which continent | is {c}?", "where in the world | is {c}?",
                     "which part of the world | is {c} in?", "what continent is | {c} on?"],
               c=c.name)
    return Exchange(q, f"{c.name} is in {c.continent}.", intent="continent")


def arithmetic(rng: random.Random) -> Exchange:
    op = rng.choice(list(OPS))
    if op == "times":
        a, b = rng.randint(2, 12), rng.randint(2, 12)
    else:
        a, b = rng.randint(1, 20), rng.randint(1, 20)
        if op == "minus" and b > a:
            a, b = b, a
    r = OPS[op](a, b)
    q = phrase(rng, ["what is {a} {op} | {b}?", "how much is {a} {op} | {b}?",
                     "can you tell me | what {a} {op} {b} is?", "quick question, what's {a} {op} | {b}?",
                     "{a} {op} {b}, | what does that make?"],
               a=number_words(a), op=op, b=number_words(b))
    return Exchange(q, f"{a} {op} {b} is {r}.", intent="arithmetic")


def colour(rng: random.Random) -> Exchange:
    thing, col = rng.choice(list(COLOURS.items()))
    q = phrase(rng, ["what colour is | {t}?", "what is the colour | of {t}?",
                     "tell me the colour | of {t}.", "which colour is | {t}?"], t=thing)
    return Exchange(q, f"{thing} is {col}.", intent="colour")


def day_next(rng: random.Random) -> Exchange:
    i = rng.randrange(7)
    if rng.random() < 0.5:
        q = phrase(rng, ["what day comes after | {d}?", "which day is after | {d}?",
                         "what is the day after | {d}?", "tell me the day | after {d}."], d=DAYS[i])
        return Exchange(q, f"the day after {DAYS[i]} is {DAYS[(i + 1) % 7]}.", intent="day_after")
    q = phrase(rng, ["what day comes before | {d}?", "which day is before | {d}?",
                     "what is the day before | {d}?", "tell me the day | before {d}."], d=DAYS[i])
    return Exchange(q, f"the day before {DAYS[i]} is {DAYS[(i - 1) % 7]}.", intent="day_before")


def month_next(rng: random.Random) -> Exchange:
    i = rng.randrange(12)
    q = phrase(rng, ["what month comes after | {m}?", "which month is after | {m}?",
                     "what is the month after | {m}?", "tell me the month | after {m}."], m=MONTHS[i])
    return Exchange(q, f"the month after {MONTHS[i]} is {MONTHS[(i + 1) % 12]}.", intent="month_after")


def month_days(rng: random.Random) -> Exchange:
    m = rng.choice(MONTHS)
    q = phrase(rng, ["how many days | are in {m}?", "how many days does | {m} have?",
                     "how long is | {m}?", "tell me how many days | {m} has."], m=m)
    extra = ", or 29 in a leap year" if m == "february" else ""
    return Exchange(q, f"{m} has {MONTH_DAYS[m]} days{extra}.", intent="month_days")


def time_units(rng: random.Random) -> Exchange:
    small, big, n = rng.choice(TIME_UNITS)
    q = phrase(rng, ["how many {s} are in | a {b}?", "how many {s} | make a {b}?",
                     "tell me how many {s} | there are in a {b}.", "a {b} has how many | {s}?"],
               s=small, b=big)
    return Exchange(q, f"there are {n} {small} in a {big}.", intent="time_units")


INTENTS = [capital, capital, currency, language, continent, arithmetic, arithmetic, colour,
           day_next, month_next, month_days, time_units]


def short_question(rng: random.Random) -> Exchange:
    """A random short closed-domain question (capitals and arithmetic weighted up)."""
    return rng.choice(INTENTS)(rng)
