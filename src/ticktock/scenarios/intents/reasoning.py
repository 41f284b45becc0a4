"""Small word problems, comparisons, day offsets, sequences and counting what was heard."""

from __future__ import annotations

import random

from ..text import number_words
from ..world import DAYS
from .exchange import Exchange, phrase

NAMES = ("anna ben carla david emma frank grace henry ivy jack kate leo mia nina oscar paul "
         "rosa sam tina victor").split()
THINGS = "apples pears oranges books pens cookies eggs stamps cards marbles".split()
ANIMALS = "cat dog bird cow horse duck".split()
COMPARE = [("taller", "tallest", "shortest"), ("older", "oldest", "youngest"),
           ("faster", "fastest", "slowest")]


def add(rng: random.Random) -> Exchange:
    a, b, x = rng.randint(2, 15), rng.randint(2, 15), rng.choice(THINGS)
    q = phrase(rng, ["i have {a} {x}, and i get {b} more. | how many {x} do i have now?",
                     "there are {a} {x} on the table. | i put {b} more there. how many are there?",
                     "{n} has {a} {x} and gets {b} more. | how many {x} does {n} have?",
                     "if i have {a} {x} and add {b}, | how many {x} is that?"],
               a=number_words(a), b=number_words(b), x=x, n=rng.choice(NAMES))
    return Exchange(q, f"that makes {a + b} {x}.", intent="add")


def subtract(rng: random.Random) -> Exchange:
    a = rng.randint(5, 20)
    b, x = rng.randint(1, a - 1), rng.choice(THINGS)
    q = phrase(rng, ["i had {a} {x}, and i gave away {b}. | how many are left?",
                     "there were {a} {x}. | {b} are gone now. how many are left?",
                     "{n} had {a} {x} and lost {b}. | how many {x} are left?",
                     "if i take {b} {x} from {a} {x}, | how many are left?"],
               a=number_words(a), b=number_words(b), x=x, n=rng.choice(NAMES))
    return Exchange(q, f"{a - b} {x} are left.", intent="subtract")


def multiply(rng: random.Random) -> Exchange:
    a, b, x = rng.randint(2, 9), rng.randint(2, 9), rng.choice(THINGS)
    q = phrase(rng, ["there are {a} boxes with {b} {x} in each box. | how many {x} are there?",
                     "i have {a} bags, and each bag has {b} {x}. | how many {x} is that?",
                     "{a} friends each bring {b} {x}. | how many {x} do they bring?",
                     "each of {a} plates holds {b} {x}. | how many {x} in total?"],
               a=number_words(a), b=number_words(b), x=x)
    return Exchange(q, f"there are {a * b} {x} in total.", intent="multiply")


def compare(rng: random.Random) -> Exchange:
    a, b, c = rng.sample(NAMES, 3)
    er, most, least = rng.choice(COMPARE)
    ask_most = rng.random() < 0.5
    sup = most if ask_most else least
    q = phrase(rng, ["{a} is {er} than {b}, and {b} is {er} than {c}. | who is the {s}?",
                     "{b} is {er} than {c}. {a} is {er} than {b}. | who is the {s}?",
                     "we know {a} is {er} than {b} and {b} is {er} than {c}. | who is {s}?",
                     "{c} is not as {adj} as {b}, and {b} is not as {adj} as {a}. | who is the {s}?"],
               a=a, b=b, c=c, er=er, s=sup, adj={"taller": "tall", "older": "old", "faster": "fast"}[er])
    return Exchange(q, f"{a if ask_most else c} is the {sup}.", intent="compare")


def bigger(rng: random.Random) -> Exchange:
    x, y = rng.sample(range(2, 100), 2)
    q = phrase(rng, ["which is bigger, | {x} or {y}?", "which number is larger, | {x} or {y}?",
                     "what is more, | {x} or {y}?", "tell me the bigger number, | {x} or {y}."],
               x=number_words(x), y=number_words(y))
    return Exchange(q, f"{max(x, y)} is bigger.", intent="bigger")


def day_offset(rng: random.Random) -> Exchange:
    i, n = rng.randrange(7), rng.randint(1, 6)
    q = phrase(rng, ["if today is {d}, | what day is it in {n} days?",
                     "what day will it be | {n} days after {d}?",
                     "today is {d}. | what day is it {n} days from now?",
                     "it is {d} today. | which day comes {n} days later?"],
               d=DAYS[i], n=number_words(n))
    return Exchange(q, f"in {n} days it will be {DAYS[(i + n) % 7]}.", intent="day_offset")


def parity(rng: random.Random) -> Exchange:
    n = rng.randint(1, 99)
    q = phrase(rng, ["is {n} even | or odd?", "is the number {n} | even or odd?",
                     "tell me if {n} is | even or odd.", "{n}, | is that even or odd?"], n=number_words(n))
    return Exchange(q, f"{n} is {'even' if n % 2 == 0 else 'odd'}.", intent="parity")


def sequence(rng: random.Random) -> Exchange:
    a, step = rng.randint(1, 10), rng.randint(1, 5)
    seq = [a + i * step for i in range(3)]
    q = phrase(rng, ["what comes next: | {s}?", "what is the next number: | {s}?",
                     "continue the pattern: | {s}.", "{s}, | what comes next?"],
               s=", ".join(number_words(v) for v in seq))
    return Exchange(q, f"the next number is {a + 3 * step}.", intent="sequence")


def count_heard(rng: random.Random) -> Exchange:
    target = rng.choice(ANIMALS)
    others = [a for a in ANIMALS if a != target]
    n = rng.randint(1, 4)
    items = [target] * n + rng.sample(others, rng.randint(1, 3))
    rng.shuffle(items)
    s = ", ".join(items)
    q = phrase(rng, ["i see these animals: {s}. | how many times did i say {t}?", "listen: {s}. | how many {t}s?",
                     "count the {t}s: | {s}.", "here is a list: {s}. | how many times is {t} in it?"],
               s=s, t=target)
    return Exchange(q, f"{target} was said {n} {'time' if n == 1 else 'times'}.", intent="count")


INTENTS = [add, subtract, multiply, compare, bigger, day_offset, parity, sequence, count_heard]


def word_problem(rng: random.Random) -> Exchange:
    return rng.choice(INTENTS)(rng)
