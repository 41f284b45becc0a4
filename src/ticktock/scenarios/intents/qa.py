"""Short closed-domain questions: capitals, currencies, languages, arithmetic, colours, dates."""

from __future__ import annotations

import random

from ..text import number_words
from ..world import COLOURS, COUNTRIES, DAYS, MONTH_DAYS, MONTHS, Country
from .shapes import (ARITHMETIC_SHAPES, CAPITAL_SHAPES, COLOUR_SHAPES, CONTINENT_SHAPES, CURRENCY_SHAPES,
                     DAY_AFTER_SHAPES, DAY_BEFORE_SHAPES, LANGUAGE_SHAPES, MONTH_AFTER_SHAPES, MONTH_DAYS_SHAPES,
                     TIME_UNITS_SHAPES)
from .exchange import Exchange, phrase, said

OPS = {"plus": lambda a, b: a + b, "minus": lambda a, b: a - b, "times": lambda a, b: a * b}
OP_WORDS = {"plus": ["and", "added to"], "minus": ["take away", "less"], "times": ["multiplied by"]}  # fresh phrasings
TIME_UNITS = [("seconds", "minute", 60), ("minutes", "hour", 60), ("hours", "day", 24),
              ("days", "week", 7), ("months", "year", 12), ("weeks", "year", 52)]


# The replies the model is trained to give, one function per intent (the `phrasings` suite asks the same
# things in other words and expects these same replies).
def capital_reply(c: Country) -> str:
    return f"the capital of {c.name} is {c.capital}."


def currency_reply(c: Country) -> str:
    return f"in {c.name} they use the {c.currency}."


def language_reply(c: Country) -> str:
    return f"people in {c.name} speak {c.language}."


def continent_reply(c: Country) -> str:
    return f"{c.name} is in {c.continent}."


def arithmetic_reply(a: int, op: str, b: int) -> str:
    return f"{a} {op} {b} is {OPS[op](a, b)}."


def colour_reply(thing: str) -> str:
    return f"{thing} is {COLOURS[thing]}."


def day_reply(day: str, after: bool) -> str:
    i = DAYS.index(day)
    return f"the day {'after' if after else 'before'} {day} is {DAYS[(i + (1 if after else -1)) % 7]}."


def month_after_reply(month: str) -> str:
    return f"the month after {month} is {MONTHS[(MONTHS.index(month) + 1) % 12]}."


def month_days_reply(month: str) -> str:
    extra = ", or 29 in a leap year" if month == "february" else ""
    return f"{month} has {MONTH_DAYS[month]} days{extra}."


def time_units_reply(small: str, big: str) -> str:
    n = next(n for s, b, n in TIME_UNITS if (s, b) == (small, big))
    return f"there are {n} {small} in a {big}."


def capital(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["what is the capital of | {c}?", "do you know the capital | of {c}?",
                     "tell me the capital | of {c}.", "which city is the capital | of {c}?",
                     "what's the capital city | of {c}?"],
               composed=CAPITAL_SHAPES,
               more=["{c}, what is | its capital?", "the capital of {c}, | what is it?", "could you tell me | the capital of {c}?", "i wonder what the capital | of {c} is.", "what city is | the capital of {c}?"], c=c.name)
    return Exchange(q, capital_reply(c), intent="capital")


def currency(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["what currency | do they use in {c}?", "what is the currency | of {c}?",
                     "what money do people use | in {c}?", "which currency is used | in {c}?"],
               composed=CURRENCY_SHAPES,
               more=["in {c}, | what currency do people pay with?", "{c} uses | which currency?", "what do they pay with | in {c}?", "which money | is used in {c}?"],
               c=c.name)
    return Exchange(q, currency_reply(c), intent="currency")


def language(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["what language do they speak | in {c}?", "which language is spoken | in {c}?",
                     "what do people speak | in {c}?", "what is the main language | of {c}?"],
               composed=LANGUAGE_SHAPES,
               more=["in {c}, | what language do people speak?", "{c} speaks | which language?", "what language is spoken | in {c}?", "which language | do people in {c} use?"],
               c=c.name)
    return Exchange(q, language_reply(c), intent="language")


def continent(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["on which continent | is {c}?", "where in the world | is {c}?",
                     "which part of the world | is {c} in?", "what continent is | {c} on?"],
               composed=CONTINENT_SHAPES,
               more=["{c} is on | which continent?", "which continent | is {c} part of?", "in what continent | do you find {c}?", "tell me the continent | of {c}."],
               c=c.name)
    return Exchange(q, continent_reply(c), intent="continent")


def arithmetic(rng: random.Random) -> Exchange:
    op = rng.choice(list(OPS))
    if op == "times":
        a, b = rng.randint(2, 12), rng.randint(2, 12)
    else:
        a, b = rng.randint(1, 20), rng.randint(1, 20)
        if op == "minus" and b > a:
            a, b = b, a
    q = phrase(rng, ["what is {a} {op} | {b}?", "how much is {a} {op} | {b}?",
                     "can you tell me | what {a} {op} {b} is?", "quick question, what's {a} {op} | {b}?",
                     "{a} {op} {b}, | what does that make?"],
               composed=ARITHMETIC_SHAPES[op],
               more=["{a} {op} {b}, | how much is that?", "work out {a} {op} | {b} for me.", "could you do {a} {op} | {b}?", "and {a} {op} | {b} is what?", "what do i get | for {a} {op} {b}?"],
               a=number_words(a), op=said(rng, op, OP_WORDS[op]), b=number_words(b))
    return Exchange(q, arithmetic_reply(a, op, b), intent="arithmetic")


def colour(rng: random.Random) -> Exchange:
    thing, _ = rng.choice(list(COLOURS.items()))
    q = phrase(rng, ["what colour is | {t}?", "what is the colour | of {t}?",
                     "tell me the colour | of {t}.", "which colour is | {t}?"],
               composed=COLOUR_SHAPES,
               more=["{t}, | what colour is it?", "what colour | would {t} be?", "which colour | does {t} have?"], t=thing)
    return Exchange(q, colour_reply(thing), intent="colour")


def day_next(rng: random.Random) -> Exchange:
    i = rng.randrange(7)
    if rng.random() < 0.5:
        q = phrase(rng, ["what day comes after | {d}?", "which day is after | {d}?",
                         "what is the day after | {d}?", "tell me the day | after {d}."],
               composed=DAY_AFTER_SHAPES,
               more=["after {d}, | which day comes?", "{d} is followed | by which day?", "which day | follows {d}?"], d=DAYS[i])
        return Exchange(q, day_reply(DAYS[i], after=True), intent="day_after")
    q = phrase(rng, ["what day comes before | {d}?", "which day is before | {d}?",
                     "what is the day before | {d}?", "tell me the day | before {d}."],
               composed=DAY_BEFORE_SHAPES,
               more=["before {d}, | which day comes?", "which day | comes right before {d}?", "what is the day | just before {d}?"], d=DAYS[i])
    return Exchange(q, day_reply(DAYS[i], after=False), intent="day_before")


def month_next(rng: random.Random) -> Exchange:
    i = rng.randrange(12)
    q = phrase(rng, ["what month comes after | {m}?", "which month is after | {m}?",
                     "what is the month after | {m}?", "tell me the month | after {m}."],
               composed=MONTH_AFTER_SHAPES,
               more=["after {m}, | which month comes?", "which month | follows {m}?", "{m} is followed | by which month?"], m=MONTHS[i])
    return Exchange(q, month_after_reply(MONTHS[i]), intent="month_after")


def month_days(rng: random.Random) -> Exchange:
    m = rng.choice(MONTHS)
    q = phrase(rng, ["how many days | are in {m}?", "how many days does | {m} have?",
                     "how long is | {m}?", "tell me how many days | {m} has."],
               composed=MONTH_DAYS_SHAPES,
               more=["{m} has | how many days?", "how many days | long is {m}?", "the number of days | in {m}, please."], m=m)
    return Exchange(q, month_days_reply(m), intent="month_days")


def time_units(rng: random.Random) -> Exchange:
    small, big, _ = rng.choice(TIME_UNITS)
    q = phrase(rng, ["how many {s} are in | a {b}?", "how many {s} | make a {b}?",
                     "tell me how many {s} | there are in a {b}.", "a {b} has how many | {s}?"],
               composed=TIME_UNITS_SHAPES,
               more=["in a {b}, | how many {s} are there?", "a {b} is | how many {s}?", "count the {s} | in a {b} for me."],
               s=small, b=big)
    return Exchange(q, time_units_reply(small, big), intent="time_units")


INTENTS = [capital, capital, currency, language, continent, arithmetic, arithmetic, colour,
           day_next, month_next, month_days, time_units]


def short_question(rng: random.Random) -> Exchange:
    """A random short closed-domain question (capitals and arithmetic weighted up)."""
    return rng.choice(INTENTS)(rng)
