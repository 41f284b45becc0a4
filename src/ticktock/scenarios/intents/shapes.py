"""Requests composed from parts (fresh phrasings): what is asked, in which sentence shape, slots in any order.

The listed templates of each intent give a request four to nine fixed shapes, and a model trained on them learns
where in those shapes the intent and its slots sit. Here a request is put together instead: a noun phrase
("the capital of peru"), an embedded question ("which city is the capital of peru") or a question about "there"
after the topic ("peru. what's its capital?") inside one of many frames ("do you know ...?", "i wonder ...",
"if i go to ...,"); a tool request is a head ("i need a flight", "will it rain") followed by its slot phrases in
every order, each phrase said one of several ways ("from", "out of", "leaving"). Each composed template keeps
`|` pause marks between its parts, as the listed ones do (the pause-handling family cuts requests there).

Written from how English asks these things, not from any suite's sentences; a test checks that no draw is a
`phrasings` request.
"""

from __future__ import annotations

from itertools import permutations, product

# frames around a noun phrase, an embedded question, a topic and its question (`{x}`, `{c}`, `{q}`)
NP_FRAMES = ["what is {x}?", "what's {x}?", "tell me {x}.", "do you know {x}?", "i'd like to know {x}.",
             "could you tell me {x}?", "give me {x}.", "name {x}.", "what would {x} be?", "{x}, | what is it?",
             "i need {x}, | please.", "remind me of {x}."]
EMBEDDED_FRAMES = ["do you know {x}?", "tell me {x}.", "i wonder {x}.", "can you tell me {x}?",
                   "i'd like to know {x}.", "any idea {x}?", "i forgot {x}.", "i'm not sure {x}.",
                   "please find out {x}.", "could you say {x}?", "i want to know {x}."]
TOPIC_FRAMES = ["{c}, | {q}", "{c}. | {q}", "about {c}: | {q}", "talking of {c}, | {q}", "and {c}, | {q}"]
TRIP_FRAMES = ["if i go to {c}, | {q}", "when i'm in {c}, | {q}", "i'm visiting {c}. | {q}",
               "on a trip to {c}, | {q}", "i'm flying to {c} soon. | {q}"]


def _asks(nps: list[str], embedded: list[str]) -> list[str]:
    return [f.replace("{x}", x) for f, x in [*product(NP_FRAMES, nps), *product(EMBEDDED_FRAMES, embedded)]]


def _about(questions: list[str], frames: list[str] = TOPIC_FRAMES) -> list[str]:
    return [f.replace("{q}", q) for f, q in product(frames, questions)]


CAPITAL_SHAPES = [
    *_asks(["the capital of | {c}", "the capital city of | {c}", "{c}'s | capital", "{c}'s | capital city",
            "the name of the capital | of {c}"],
           ["what the capital of | {c} is", "which city is | {c}'s capital", "what {c}'s | capital is",
            "which city is the capital | of {c}"]),
    *_about(["what's its | capital?", "what is its capital | city?", "which city is | its capital?",
             "what's the capital | there?"])]
_PAY_THERE = ["what currency | do they use there?", "what money | do people use there?",
              "what do they | pay with there?", "which currency | is used there?", "what's the currency | there?"]
CURRENCY_SHAPES = [
    *_asks(["the currency of | {c}", "the money used | in {c}", "{c}'s | currency", "the currency | they use in {c}",
            "the kind of money | people use in {c}"],
           ["what currency | they use in {c}", "what money people | pay with in {c}", "which currency | {c} uses",
            "what they pay with | in {c}"]),
    *_about(_PAY_THERE), *_about(_PAY_THERE, TRIP_FRAMES)]
_SPEAK_THERE = ["what language | do they speak there?", "what do people | speak there?",
                "which language | is spoken there?", "what's the language | there?"]
LANGUAGE_SHAPES = [
    *_asks(["the language of | {c}", "the main language | of {c}", "{c}'s | language",
            "the language | people speak in {c}", "the language | spoken in {c}"],
           ["what language | they speak in {c}", "which language | people speak in {c}", "what people | speak in {c}",
            "which language | is spoken in {c}"]),
    *_about(_SPEAK_THERE), *_about(_SPEAK_THERE, TRIP_FRAMES)]
CONTINENT_SHAPES = [
    *_asks(["the continent of | {c}", "the continent | {c} is on", "the continent | {c} belongs to",
            "the part of the world | {c} is in"],
           ["which continent | {c} is in", "what continent | {c} is on", "where in the world | {c} is",
            "which continent | {c} belongs to"]),
    *_about(["which continent | is it on?", "what continent | is it in?", "where in the world | is it?",
             "which continent | does it belong to?"])]
COLOUR_SHAPES = _asks(["the colour of | {t}", "{t}'s | colour"], ["what colour | {t} is", "which colour | {t} has"])
DAY_AFTER_SHAPES = [
    *_asks(["the day after | {d}", "the day following | {d}", "the next day | after {d}"],
           ["what day comes | after {d}", "which day follows | {d}"]),
    "{d} today, | so what's tomorrow?", "if today is {d}, | what day will tomorrow be?"]
DAY_BEFORE_SHAPES = [
    *_asks(["the day before | {d}", "the day that comes | before {d}"],
           ["what day comes | before {d}", "which day is | before {d}"]),
    "{d} today, | so what was yesterday?"]
MONTH_AFTER_SHAPES = [
    *_asks(["the month after | {m}", "the month following | {m}", "the next month | after {m}"],
           ["which month comes | after {m}", "what month follows | {m}"]),
    "when {m} ends, | which month comes next?"]
MONTH_DAYS_SHAPES = _asks(["the number of days | in {m}", "the length of | {m}"],
                          ["how many days | {m} has", "how many days | there are in {m}", "how long | {m} is"])
TIME_UNITS_SHAPES = _asks(["the number of {s} | in a {b}"],
                          ["how many {s} | are in a {b}", "how many {s} | a {b} has", "how many {s} | make up a {b}"])

# arithmetic, by operation: what is said in the operation's own words, operands in the reply's order
_SUM_FRAMES = ["what is {x}?", "what's {x}?", "how much is {x}?", "what does {x} | make?", "{x}, | what's the answer?",
               "tell me {x}.", "do you know {x}?", "what do you get | for {x}?", "work out {x}."]
_DO_FRAMES = ["{x}.", "please {x}.", "can you {x}?", "{x} for me.", "could you {x} | and tell me the answer?",
              "{x}, | what do you get?", "i need you to {x}."]
_OPS = {"plus": (["{a} plus | {b}", "{a} and {b} | added together", "the sum of {a} | and {b}", "{a} added | to {b}"],
                 ["add {a} | and {b}", "add up {a} | and {b}", "put {a} and {b} | together"]),
        "minus": (["{a} minus | {b}", "{a} take away | {b}", "{a} less | {b}", "{a} with {b} | taken away",
                   "the difference between {a} | and {b}"],
                  ["subtract {b} | from {a}", "take {b} | from {a}", "take {b} away | from {a}"]),
        "times": (["{a} times | {b}", "{a} multiplied | by {b}", "the product of {a} | and {b}"],
                  ["multiply {a} | by {b}", "multiply {a} | and {b}"])}
ARITHMETIC_SHAPES = {op: [f.replace("{x}", x) for f, x in [*product(_SUM_FRAMES, said), *product(_DO_FRAMES, done)]]
                     for op, (said, done) in _OPS.items()}


def _heads_then_slots(heads: list[tuple[str, str]], slots: list[list[str]]) -> list[str]:
    """Each head ("i need a flight", "?") followed by one way of saying each slot, the slots in every order."""
    out = []
    for (head, mark), said in product(heads, product(*slots)):
        out += [f"{head} {' | '.join(order)}{mark}" for order in permutations(said)]
    return out


FLIGHTS_SHAPES = _heads_then_slots(
    [("i need a flight", "."), ("find me a flight", "."), ("book me a flight", "."), ("look up flights", "."),
     ("are there any flights", "?"), ("is there a flight", "?"), ("i want to fly", "."), ("i'd like to fly", "."),
     ("i have to fly", "."), ("show me flights", "."), ("can i get a flight", "?"), ("any flights", "?")],
    [["from {o}", "out of {o}", "leaving {o}"], ["to {d}", "going to {d}", "into {d}"],
     ["on {day}", "this {day}", "for {day}", "next {day}"]])
WEATHER_SHAPES = _heads_then_slots(
    [("what's the weather", "?"), ("what will the weather be", "?"), ("how's the weather", "?"),
     ("what's the forecast", "?"), ("will it rain", "?"), ("will it be sunny", "?"), ("is it going to be cold", "?"),
     ("tell me the weather", "."), ("check the weather", "."), ("give me the forecast", "."),
     ("what's it going to be like", "?"), ("any rain", "?")],
    [["in {c}", "for {c}", "over in {c}"], ["on {day}", "this {day}", "for {day}"]])
TIMER_SHAPES = [f.replace("{h}", h) for f, h in product(
    ["{h}.", "please {h}.", "can you {h}?", "could you {h}, | please?", "{h}, | thanks.", "i'd like you to {h}."],
    ["set a timer | for {d}", "start a timer | for {d}", "set an alarm | for {d} from now", "let me know | in {d}",
     "ping me | in {d}", "alert me | in {d}", "wake me up | in {d}", "count down | {d}",
     "remind me | after {d}", "beep | in {d}", "start a {n} minute | timer"])]
CURRENCY_CONVERT_SHAPES = [f.replace("{x}", "{a} {s}") for f in [
    "convert {x} | to {d}.", "change {x} | into {d}.", "exchange {x} | for {d}.", "what's {x} | in {d}?",
    "how many {d} | do i get for {x}?", "how many {d} | is {x}?", "what are {x} | worth in {d}?",
    "i have {x}, | how much is that in {d}?", "{x}, | what's that in {d}?", "{x} to {d}, | please.",
    "what would i get in {d} | for {x}?"]]
TABLE_SHAPES = _heads_then_slots(
    [("book a table", "."), ("reserve a table", "."), ("i'd like a table", "."), ("we need a table", "."),
     ("get us a table", "."), ("can we have a table", "?"), ("find us a table", "."), ("make a reservation", "."),
     ("could you book us a table", "?"), ("i want to book a table", ".")],
    [["at {r}"], ["for {party}"], ["at {t}", "for {t}"]])
