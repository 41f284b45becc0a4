"""Requests composed from parts (fresh phrasings): what is asked, in which sentence shape, slots in any order.

The listed templates of each intent give a request four to nine fixed shapes, and a model trained on them learns
where in those shapes the intent and its slots sit. Here a request is put together instead: a noun phrase
("the capital of peru"), an embedded question ("which city is the capital of peru") or a question about "there"
after the topic ("peru. what's its capital?") inside one of many frames ("do you know ...?", "i wonder ...",
"would you mind telling me ...?", "if i go to ...,"), or a whole sentence written for the intent. Frames and
sentences span the forms conversation asks in: casual short forms ("peru's capital?"), tags ("you know ..., right?"),
a yes-no before the real question ("have you heard of peru? what's its capital?"), a premise first ("if yesterday
was monday, what's today?"), echoes ("after june comes what?"), either-or ("is june thirty days or thirty-one?"),
hesitations and self-corrections ("what's the currency, no, sorry, the capital of peru?"), recall ("what was ...
again?"), negated and indirect lead-ins ("i don't know ...", "i need to know ...") and long lead-ins before the
slot. A tool request is a head ("i need a flight", "will it rain", "can we eat", "would you mind booking a table")
followed (or, for a head holding `{slots}`, surrounded) by its slot phrases in many orders, each phrase said one of
several ways ("from", "out of", "leaving"); where heads, ways and orders multiply past a few thousand, each head
keeps a fixed share of them, drawn once with a fixed seed. Each composed template keeps `|` pause marks between its
parts, as the listed ones do (the pause-handling family cuts requests there).

Written from how English asks these things, not from any suite's sentences; a test checks that no draw is a
`phrasings` request.
"""

from __future__ import annotations

import random
from itertools import permutations, product

# frames around a noun phrase, an embedded question, a topic and its question (`{x}`, `{c}`, `{q}`)
NP_FRAMES = ["what is {x}?", "what's {x}?", "tell me {x}.", "do you know {x}?", "i'd like to know {x}.",
             "could you tell me {x}?", "give me {x}.", "name {x}.", "what would {x} be?", "{x}, | what is it?",
             "i need {x}, | please.", "remind me of {x}.",
             "would you mind telling me {x}?", "i was hoping you could tell me {x}.", "do you happen to know {x}?",
             "hey, | what's {x}?", "so, | what's {x}?", "okay so | what is {x}?", "what do you think {x} is?",
             "i can't remember {x}.", "what would you say {x} is?", "i'm trying to remember {x}.",
             "can you look up {x} | for me?",
             # casual, tagged, hesitant, negated, indirect and recalled forms; each reads for every noun phrase
             "{x}?", "what was {x} again?", "what's, uh, | {x}?", "i need to know {x}.", "i don't know {x}. | do you?",
             "i don't suppose you know {x}?", "you wouldn't happen to know {x}, | would you?",
             "you know {x}, | right?", "remind me what {x} is.", "have you got any idea what {x} is?",
             "i've totally forgotten {x}. | what is it?", "sorry, i mean, | what's {x}?", "and what about {x}?",
             "i've been meaning to ask you | for a while now, | what's {x}?", "for a quiz i'm doing, | what's {x}?",
             "my friend and i can't agree on {x}. | what is it?", "help me out, | what's {x}?",
             "{x}: | do you know it?", "what's {x}, | if you don't mind me asking?"]
EMBEDDED_FRAMES = ["do you know {x}?", "tell me {x}.", "i wonder {x}.", "can you tell me {x}?",
                   "i'd like to know {x}.", "any idea {x}?", "i forgot {x}.", "i'm not sure {x}.",
                   "please find out {x}.", "could you say {x}?", "i want to know {x}.",
                   "would you mind telling me {x}?", "i was hoping you could tell me {x}.",
                   "do you happen to know {x}?", "i can't remember {x}.", "i've been wondering {x}.",
                   "hey, | do you know {x}?", "so, | i was wondering {x}.", "is it possible to find out {x}?",
                   "could you check {x} | for me?", "let me know {x}.", "i have no idea {x}.",
                   # the same kinds of form around a question said inside the sentence
                   "i need to know {x}.", "i don't know {x}.", "i really don't remember {x}.",
                   "can you remind me {x}?", "you wouldn't know {x}, | would you?", "you know {x}, | don't you?",
                   "do you remember {x}?", "my friend asked me {x}, | and i didn't know.",
                   "someone asked me {x} | and i had no answer.", "i'm trying to work out {x}.",
                   "i've always wondered {x}.", "would you know {x}?", "i'm curious {x}.", "do you, uh, | know {x}?",
                   "i was just, um, | wondering {x}.", "does anybody know {x}?", "tell me if you know {x}.",
                   "i always forget {x}.", "is there any chance you know {x}?",
                   "i'd be grateful if you told me {x}."]
TOPIC_FRAMES = ["{c}, | {q}", "{c}. | {q}", "about {c}: | {q}", "talking of {c}, | {q}", "and {c}, | {q}",
                "so, {c}. | {q}", "speaking of {c}, | {q}", "as for {c}, | {q}", "okay, {c}. | {q}",
                # a yes-no or a remark about the country first, then the question
                "you know {c}? | {q}", "have you heard of {c}? | {q}", "i know nothing about {c}. | {q}",
                "i've been reading about {c}. | {q}", "what about {c}? | {q}", "now, {c}: | {q}",
                "i have a question about {c}. | {q}", "take {c}, | {q}", "there's this country, {c}. | {q}",
                "let's say {c}. | {q}", "i keep hearing about {c}. | {q}", "so about {c}, | um, | {q}"]
TRIP_FRAMES = ["if i go to {c}, | {q}", "when i'm in {c}, | {q}", "i'm visiting {c}. | {q}",
               "on a trip to {c}, | {q}", "i'm flying to {c} soon. | {q}", "i'm heading to {c}. | {q}",
               "we're going to {c} next month. | {q}", "before my trip to {c}, | {q}",
               "i'm moving to {c}. | {q}", "my cousin lives in {c}. | {q}", "we just booked a holiday in {c}. | {q}",
               "i'll be in {c} for work. | {q}", "i'm thinking of visiting {c}. | {q}", "say i went to {c}: | {q}",
               "i've never been to {c}. | {q}", "next week i'm off to {c}. | {q}", "if i ever visit {c}, | {q}"]


class Shapes(list):
    """An intent's composed sentences, each once (drawn alike), and `forms`: the same sentences in the groups they
    were written as (frames around noun phrases, around embedded questions, a topic then its question, a trip then
    its question, whole sentences), so that a draw can give each group one weight, not each sentence
    (`fresh_phrasings(by_form=True)`): a product of frames has hundreds of sentences, a form written whole a few."""

    def __init__(self, *forms: list[str]) -> None:
        self.forms = tuple(forms)
        super().__init__(s for form in forms for s in form)


def _asks(nps: list[str], embedded: list[str]) -> tuple[list[str], list[str]]:
    """The noun phrases in every NP frame, and the embedded questions in every embedded frame: two forms."""
    return [f.replace("{x}", x) for f, x in product(NP_FRAMES, nps)], \
        [f.replace("{x}", x) for f, x in product(EMBEDDED_FRAMES, embedded)]


def _about(questions: list[str], frames: list[str] = TOPIC_FRAMES) -> list[str]:
    return [f.replace("{q}", q) for f, q in product(frames, questions)]


CAPITAL_SHAPES = Shapes(
    *_asks(["the capital of | {c}", "the capital city of | {c}", "{c}'s | capital", "{c}'s | capital city",
            "the name of the capital | of {c}", "the capital | of {c}", "the capital | over in {c}",
            "the capital | for {c}", "the capital of the country | {c}"],
           ["what the capital of | {c} is", "which city is | {c}'s capital", "what {c}'s | capital is",
            "which city is the capital | of {c}", "what the capital city | of {c} is called",
            "what {c} has | as its capital", "what city | serves as {c}'s capital", "what they call | {c}'s capital"]),
    _about(["what's its | capital?", "what is its capital | city?", "which city is | its capital?",
            "what's the capital | there?", "what's the capital | called?", "which city | is the capital?",
            "what do they call | the capital?",
            "and the capital | is?", "its capital | is what?", "what's its, uh, | capital?",
            "what's the capital | of that country?", "do you know its capital? | what is it?",
            "what's it got | as a capital?", "what was its capital | again?", "the capital's | called what?"]),
    # whole sentences: the slot after a long lead-in, a hesitation before it, a question corrected to this one
    ["capital | of {c}?", "{c}, | capital?", "the capital of {c} | is what?", "{c}'s capital | is what, again?",
     "i was doing a crossword | and one clue asks for the capital | of {c}.",
     "for a quiz tonight | i need the capital | of {c}.", "my kid's homework | asks for the capital | of {c}.",
     "what's the capital of, uh, | {c}?", "what's the currency, | no, sorry, | the capital of {c}?",
     "is the capital of {c} | its biggest city, | or somewhere else?", "say i land in {c}'s capital. | where am i?"])
_PAY_THERE = ["what currency | do they use there?", "what money | do people use there?",
              "what do they | pay with there?", "which currency | is used there?", "what's the currency | there?",
              "what kind of money | will i need there?", "what's the local | currency?",
              "what currency | is it there?", "what will i | pay with there?", "what's the money | called there?",
              "do they have their own money? | what's it called?", "which money | do they take there?",
              "what currency | should i bring?", "the currency there | is what?", "what do i, um, | pay with there?"]
CURRENCY_SHAPES = Shapes(
    *_asks(["the currency of | {c}", "the money used | in {c}", "{c}'s | currency", "the currency | they use in {c}",
            "the kind of money | people use in {c}", "the official currency | of {c}", "the money | in {c}",
            "the local currency | in {c}", "the currency | {c} uses", "the money | they have in {c}"],
           ["what currency | they use in {c}", "what money people | pay with in {c}", "which currency | {c} uses",
            "what they pay with | in {c}", "what kind of money | they use in {c}", "what money | {c} uses",
            "what i'd pay with | in {c}", "what the money | is called in {c}", "what you need to pay | in {c}"]),
    _about(_PAY_THERE),
    _about(_PAY_THERE, TRIP_FRAMES),
    # whole sentences: short, premised, in the future, hesitant, corrected
    ["money | in {c}?", "{c}, | what currency?", "in {c}, | do they have their own currency? | what is it?",
     "what currency | will i need | when i land in {c}?", "say i'm shopping in {c}: | what do i pay with?",
     "paying for things in {c}, | what currency is it?", "what's, um, | the money called | in {c}?",
     "what's the language, | sorry, | the currency in {c}?", "before i fly to {c}, | which currency | should i get?",
     "what currency | will i be using | in {c}?", "is it true {c} has | its own currency? | what's it called?"])
_SPEAK_THERE = ["what language | do they speak there?", "what do people | speak there?",
                "which language | is spoken there?", "what's the language | there?",
                "what language | do the locals speak?", "what do they | speak over there?",
                "what language | will i hear there?", "what's spoken | there?",
                "do they have their own language? | what is it?", "which language | should i learn | before i go?",
                "what do people | talk in there?", "the language there | is what?", "what do they, uh, | speak there?",
                "what language | do people use there?"]
LANGUAGE_SHAPES = Shapes(
    *_asks(["the language of | {c}", "the main language | of {c}", "{c}'s | language",
            "the language | people speak in {c}", "the language | spoken in {c}", "the official language | of {c}",
            "the language | in {c}", "the national language | of {c}", "the language | they talk in {c}",
            "the local language | in {c}"],
           ["what language | they speak in {c}", "which language | people speak in {c}", "what people | speak in {c}",
            "which language | is spoken in {c}", "what they speak | in {c}", "what they talk | in {c}",
            "what language | people use in {c}", "what language | you'd hear in {c}",
            "what the locals speak | in {c}"]),
    _about(_SPEAK_THERE),
    _about(_SPEAK_THERE, TRIP_FRAMES),
    # whole sentences: short, premised, in the future, hesitant, corrected
    ["language | in {c}?", "{c}, | what language?", "what language | will i hear | in {c}?",
     "what language | would i need | in {c}?", "say i'm lost in {c}: | what language do i ask in?",
     "in {c}, | do they have their own language? | what is it?", "what do they, uh, | speak in {c}?",
     "what's the currency, | no, | the language in {c}?",
     "i'm learning a language for my trip to {c}. | which one should it be?",
     "is it true they have | their own language in {c}? | what is it?"])
CONTINENT_SHAPES = Shapes(
    *_asks(["the continent of | {c}", "the continent | {c} is on", "the continent | {c} belongs to",
            "the part of the world | {c} is in", "the continent | {c} is part of", "the continent | {c} sits on",
            "the continent | where {c} is", "the continent | you find {c} on", "{c}'s | continent"],
           ["which continent | {c} is in", "what continent | {c} is on", "where in the world | {c} is",
            "which continent | {c} belongs to", "what part of the world | {c} is in", "which continent | {c} sits on",
            "what continent | you'd find {c} on", "which continent | {c} is part of", "where on earth | {c} is"]),
    _about(["which continent | is it on?", "what continent | is it in?", "where in the world | is it?",
            "which continent | does it belong to?", "what continent | is it part of?",
            "which part of the world | is it in?",
            "what continent's | it on?", "where is it, | continent-wise?", "which continent | would that be?",
            "it's on | which continent?", "is it in europe, | or somewhere else?",
            "do you know which continent | it's in?", "what continent | is it on, again?",
            "it's in what part | of the world?"]),
    # whole sentences: short, either-or, premised, in the future, hesitant, corrected
    ["continent | of {c}?", "{c}, | which continent?", "{c} is on | what continent again?",
     "is {c} in europe, | or where is it?", "is {c} in asia | or africa? | which is it?",
     "if i fly to {c}, | which continent | will i land on?", "say i'm in {c}. | what continent am i on?",
     "{c}, | that's on which continent?", "i always mix up | where {c} is. | which continent?",
     "which continent is {c}, | uh, | on?", "what's the capital, | no, | the continent of {c}?"])
COLOUR_SHAPES = Shapes(
    *_asks(["the colour of | {t}", "{t}'s | colour", "the colour | {t} is", "the usual colour | of {t}"],
           ["what colour | {t} is", "which colour | {t} has", "what colour | {t} usually is",
            "what colour | {t} tends to be", "what colour | you'd call {t}"]),
    # whole sentences: short, echoed, premised, hesitant, recalled
    ["{t}, | what colour?", "colour | of {t}?", "{t} is | what colour?", "{t} is, | uh, | what colour again?",
     "what colour is, um, | {t}?", "what colour is {t} | normally?", "what colour was {t} | again?",
     "think of {t}. | what colour is it?", "if i drew {t}, | which crayon would i pick?",
     "my kid asked me | what colour {t} is.", "what colour would i see | if i looked at {t}?"])
DAY_AFTER_SHAPES = Shapes(
    *_asks(["the day after | {d}", "the day following | {d}", "the next day | after {d}",
            "the day that comes | after {d}", "the day straight after | {d}"],
           ["what day comes | after {d}", "which day follows | {d}", "which day | comes after {d}",
            "what day it is | after {d}", "which day | {d} is followed by"]),
    ["{d} today, | so what's tomorrow?", "if today is {d}, | what day will tomorrow be?",
     "say it's {d} today. | what day is next?", "today's {d}. | what day is it tomorrow?",
     "it's {d} now, | so what day is tomorrow?",
     # a premise first (yesterday, a plan), an echo, the future
     "if yesterday was {d}, | what's today?", "yesterday was {d}. | what day is it today?",
     "if it's {d} today, | what will it be tomorrow?", "{d} today, | tomorrow is what?", "after {d} | comes what?",
     "{d}, | and the next day is?", "what day is it | the day after {d}?",
     "the meeting's the day after {d}. | which day is that?",
     "i'm busy on {d} | and free the day after. | which day is that?",
     "if i wait a day after {d}, | what day will it be?", "what day will it be | a day after {d}?",
     "one day after {d} | is what day?"])
DAY_BEFORE_SHAPES = Shapes(
    *_asks(["the day before | {d}", "the day that comes | before {d}", "the day preceding | {d}",
            "the day just before | {d}"],
           ["what day comes | before {d}", "which day is | before {d}", "which day | comes right before {d}",
            "what day {d} | comes after", "which day | precedes {d}"]),
    ["{d} today, | so what was yesterday?", "suppose today is {d}. | what was the day before?",
     "it's {d} today. | what was yesterday?",
     # a premise first (tomorrow, a plan), an echo, the past
     "if tomorrow is {d}, | what's today?", "tomorrow's {d}. | what day is it today?",
     "if it's {d} today, | what was it yesterday?", "{d} today, | yesterday was what?", "before {d} | comes what?",
     "what day was it | the day before {d}?", "one day before {d} | is what day?",
     "the party's the day before {d}. | which day is that?",
     "i need to finish by the day before {d}. | what day is that?", "what day comes | just before {d}?",
     "which day | precedes {d}?", "the day ahead of {d}, | which one is it?"])
MONTH_AFTER_SHAPES = Shapes(
    *_asks(["the month after | {m}", "the month following | {m}", "the next month | after {m}",
            "the month that follows | {m}", "the month straight after | {m}"],
           ["which month comes | after {m}", "what month follows | {m}", "what comes | after {m}",
            "what month | comes after {m}", "which month | is after {m}"]),
    ["when {m} ends, | which month comes next?", "once {m} is over, | what month is it?",
     "after {m} finishes, | which month starts?",
     # a premise first (this month, last month, a plan), an echo, the future
     "if this month is {m}, | what's next month?", "it's {m} now. | what month comes next?",
     "if last month was {m}, | what month is it now?", "{m}, | and then which month?", "after {m} | comes what?",
     "what month will it be | after {m}?", "what month will it be | once {m} ends?",
     "i'm moving the month after {m}. | which month is that?", "one month after {m} | is what month?",
     "we're in {m}. | what's next month?", "{m} is this month, | so next month is what?"])
MONTH_DAYS_SHAPES = Shapes(
    *_asks(["the number of days | in {m}", "the length of | {m}", "the day count | of {m}",
            "the number of days | {m} has"],
           ["how many days | {m} has", "how many days | there are in {m}", "how long | {m} is",
            "how many days long | {m} is", "how many days | {m} lasts", "how many days | are in {m}"]),
    # whole sentences: either-or, premised, past and future, hesitant, echoed
    ["is {m} thirty days | or thirty-one?", "does {m} have thirty days | or thirty-one?",
     "{m}: | thirty or thirty-one days?", "how many days | do we get in {m}?", "how many days | did {m} have?",
     "how many days | will there be in {m}?", "{m} has, | uh, | how many days?", "how many days | is {m} again?",
     "the month of {m}, | how many days is it?", "i'm paying rent by the day in {m}. | how many days is that?",
     "{m} is how many days | long?", "how many days | does {m} last?", "how long does {m} | last, | in days?",
     "how many days | have we got in {m}?", "thirty days hath september, | but how many does {m} have?",
     "is it true that {m} | has thirty-one days? | how many does it have?"])
TIME_UNITS_SHAPES = Shapes(
    *_asks(["the number of {s} | in a {b}", "the number of {s} | that make a {b}", "the number of {s} | in one {b}"],
           ["how many {s} | are in a {b}", "how many {s} | a {b} has", "how many {s} | make up a {b}",
            "how many {s} | a {b} lasts", "how many {s} | go into a {b}", "how many {s} | there are in one {b}"]),
    # whole sentences: short, echoed, premised, in the future, hesitant
    ["how many {s} | in a {b}?", "{s} | in a {b}?", "a {b} is | how many {s} long?", "how many {s} long | is a {b}?",
     "how many {s} | does a {b} last?", "how many {s} | go into a {b}?", "how many {s} | fit in a {b}?",
     "how many {s} | are there in one {b}?", "in one {b}, | how many {s} do we get?", "one {b} | is how many {s}?",
     "if i wait a {b}, | how many {s} is that?", "say i have a {b}. | how many {s} is that?",
     "a whole {b}, | how many {s} is it?", "how many {s} | would a {b} be?", "how many {s} | make one {b}?",
     "how many {s}, | uh, | in a {b}?", "how many {s} is a {b} | made of?"])

# arithmetic, by operation: what is said in the operation's own words, operands in the reply's order
_SUM_FRAMES = ["what is {x}?", "what's {x}?", "how much is {x}?", "what does {x} | make?", "{x}, | what's the answer?",
               "tell me {x}.", "do you know {x}?", "what do you get | for {x}?", "work out {x}.",
               "what does {x} | come to?", "what's the answer | to {x}?", "quick one, | what's {x}?",
               "hey, | how much is {x}?", "any idea what {x} | is?", "i was hoping you could tell me | what {x} is.",
               "would you mind working out {x}?",
               # short, echoed, hesitant, recalled, negated and indirect forms
               "{x}?", "{x} | is what?", "{x} equals | what?", "{x} makes | what?", "{x}, | how much?",
               "what's, uh, | {x}?", "what was {x} | again?", "what's {x} | equal to?", "what does {x} | equal?",
               "i need to know {x}.", "i don't know what {x} | comes to.", "i'm stuck on {x}. | what is it?",
               "can you do {x} | in your head?", "what will {x} | give me?", "help me with {x}.",
               "you know {x}, | right?"]
_DO_FRAMES = ["{x}.", "please {x}.", "can you {x}?", "{x} for me.", "could you {x} | and tell me the answer?",
              "{x}, | what do you get?", "i need you to {x}.", "go ahead and {x}.", "i was hoping you could {x}.",
              "is it possible to {x}?", "quick, | {x}.", "okay so | {x}, what's that?",
              # the doing as a premise, a tag or a hesitation before the question
              "if you {x}, | what do you get?", "what do you get | if you {x}?", "when you {x}, | what's the result?",
              "what's the answer | if you {x}?", "what happens if you {x}?", "help me {x}.", "can you quickly {x}?",
              "would you {x}?", "let's {x}. | what do we get?", "you can {x}, | right?", "um, | {x}?",
              "i need to {x}, | what's the answer?"]
_OPS = {"plus": (["{a} plus | {b}", "{a} and {b} | added together", "the sum of {a} | and {b}", "{a} added | to {b}",
                  "{a} and {b} | together", "the total of {a} | and {b}"],
                 ["add {a} | and {b}", "add up {a} | and {b}", "put {a} and {b} | together", "add {a} | to {b}"]),
        "minus": (["{a} minus | {b}", "{a} take away | {b}", "{a} less | {b}", "{a} with {b} | taken away",
                   "the difference between {a} | and {b}", "{b} subtracted | from {a}"],
                  ["subtract {b} | from {a}", "take {b} | from {a}", "take {b} away | from {a}",
                   "take {b} off | {a}"]),
        "times": (["{a} times | {b}", "{a} multiplied | by {b}", "the product of {a} | and {b}", "{a} lots | of {b}",
                   "{a} multiplied | with {b}"],
                  ["multiply {a} | by {b}", "multiply {a} | and {b}", "multiply together | {a} and {b}"])}
# whole sentences in the operation's own terms: things had and given away, groups of things
_OP_STORIES = {"plus": ["if i have {a} | and get {b} more, | how many is that?", "{a} and {b} more | makes how many?",
                        "what's {b} | on top of {a}?", "i had {a}, | then {b} more came. | how many now?",
                        "start with {a}, | add {b}, | what have you got?"],
               "minus": ["if i have {a} | and give away {b}, | how many are left?",
                         "{a} take away {b}, | what's left?", "what's left | if you take {b} from {a}?",
                         "how many are left | when {b} are taken from {a}?", "{b} less than {a} | is what?",
                         "what do you get | if {b} is taken away from {a}?"],
               "times": ["{a} groups of {b}, | how many in total?", "if i have {a} boxes | of {b}, | how many is that?",
                         "{a} sets of {b} | make what?", "what's {a} | times by {b}?",
                         "{a} rows of {b}, | how many altogether?"]}
ARITHMETIC_SHAPES = {op: Shapes([f.replace("{x}", x) for f, x in product(_SUM_FRAMES, said)],
                                [f.replace("{x}", x) for f, x in product(_DO_FRAMES, done)], _OP_STORIES[op])
                     for op, (said, done) in _OPS.items()}


def _heads_then_slots(heads: list[tuple[str, str]], slots: list[list[str]], every: int = 1) -> list[str]:
    """Each head ("i need a flight", "?") followed by one way of saying each slot, the slots in every order; a head
    holding `{slots}` ("{slots}, | any flights") has them there instead. With `every` > 1 each head keeps one in
    `every` of its ways and orders (the same draw each time: a fixed seed), so many heads stay a list of thousands."""
    rng = random.Random(0)
    out = []
    for head, mark in heads:
        body = head if "{slots}" in head else f"{head} {{slots}}"
        said = [" | ".join(order) for ways in product(*slots) for order in permutations(ways)]
        kept = said if every == 1 else rng.sample(said, -(-len(said) // every))
        out += [body.replace("{slots}", s) + mark for s in kept]
    return out


def _rotated(frames: list[str], heads: list[str], every: int = 1) -> list[str]:
    """Each frame ("can you {h}?") around one in `every` of the heads, the kept heads shifting from frame to frame
    so that each head meets every frame kind in turn."""
    return [f.replace("{h}", h) for i, f in enumerate(frames) for j, h in enumerate(heads) if (i + j) % every == 0]


_DAY_SAID = ["on {day}", "this {day}", "for {day}", "next {day}", "this coming {day}", "sometime on {day}"]
FLIGHTS_SHAPES = [
    *_heads_then_slots(
        [("i need a flight", "."), ("find me a flight", "."), ("book me a flight", "."), ("look up flights", "."),
         ("are there any flights", "?"), ("is there a flight", "?"), ("i want to fly", "."), ("i'd like to fly", "."),
         ("i have to fly", "."), ("show me flights", "."), ("can i get a flight", "?"), ("any flights", "?"),
         ("i need to fly", "."), ("i need to travel", "."), ("i'd like to travel", "."), ("i have to travel", "."),
         ("i need to catch a plane", "."), ("can i catch a plane", "?"), ("i have to catch a flight", "."),
         ("i'm looking for a flight", "."), ("help me find a flight", "."), ("search for flights", "."),
         ("check flights", "."), ("what flights are there", "?"), ("what flights do you have", "?"),
         ("get me a flight", "."), ("get me on a flight", "."), ("put me on a flight", "."), ("book a flight", "."),
         ("i need a plane ticket", "."), ("get me a plane ticket", "."), ("is there anything flying", "?"),
         ("do you have any flights", "?"), ("got any flights", "?"), ("can you find me a flight", "?"),
         ("could you book me a flight", "?"), ("would you mind finding me a flight", "?"),
         ("would you mind looking up flights", "?"), ("i was hoping you could find me a flight", "."),
         ("is it possible to get a flight", "?"), ("is it possible to fly", "?"), ("could you search for flights", "?"),
         ("hey, i need a flight", "."), ("so i need to fly", "."), ("okay so i'm looking for a flight", "."),
         ("hey, any flights", "?"), ("a flight", ", please."), ("a plane ticket", ", please."),
         ("we need a flight", "."), ("we want to fly", "."), ("i'm hoping to fly", "."),
         ("{slots}, | any flights", "?"), ("{slots}, | can you find me a flight", "?"),
         ("{slots}, | i need a flight", ".")],
        [["from {o}", "out of {o}", "leaving {o}", "leaving from {o}"],
         ["to {d}", "going to {d}", "into {d}", "heading to {d}"], _DAY_SAID], every=5),
    *_heads_then_slots(  # going somewhere: the way there needs "from" and "to"
        [("i need to get", "."), ("i have to get", "."), ("i'm trying to get", "."), ("i need to go", "."),
         ("fly me", ".")],
        [["from {o}", "out of {o}"], ["to {d}", "over to {d}"], _DAY_SAID], every=2)]
WEATHER_SHAPES = _heads_then_slots(
    [("what's the weather", "?"), ("what will the weather be", "?"), ("how's the weather", "?"),
     ("what's the forecast", "?"), ("will it rain", "?"), ("will it be sunny", "?"), ("is it going to be cold", "?"),
     ("tell me the weather", "."), ("check the weather", "."), ("give me the forecast", "."),
     ("what's it going to be like", "?"), ("any rain", "?"),
     ("what's the weather like", "?"), ("what's the weather looking like", "?"), ("how's the weather looking", "?"),
     ("what kind of weather can i expect", "?"), ("what's the weather going to do", "?"),
     ("is it going to rain", "?"), ("will it snow", "?"), ("will it be windy", "?"), ("is it going to be nice", "?"),
     ("any chance of rain", "?"), ("do i need an umbrella", "?"), ("should i bring an umbrella", "?"),
     ("what should i wear", "?"), ("check the forecast", "."), ("look up the weather", "."),
     ("pull up the forecast", "."), ("i need the forecast", "."), ("i want to know the weather", "."),
     ("can you check the weather", "?"), ("could you tell me the weather", "?"),
     ("would you mind checking the forecast", "?"), ("i was hoping you could check the weather", "."),
     ("is it possible to get the forecast", "?"), ("hey, what's the weather", "?"),
     ("so how's the weather going to be", "?"), ("okay so what's the forecast", "?"),
     ("the weather", ", please."), ("the forecast", ", please."),
     ("{slots}, | what's the weather like", "?"), ("{slots}, | will it rain", "?"),
     ("{slots}, | can you check the forecast", "?")],
    [["in {c}", "for {c}", "over in {c}", "out in {c}"], ["on {day}", "this {day}", "for {day}", "next {day}",
                                                          "this coming {day}"]], every=3)
# ways to be told when a time is up, said bare ("set a timer for {d}") inside the frames; `{a_n}` is the number
# alone after its article ("an eight")
_TIMER_DO = ["set a timer | for {d}", "start a timer | for {d}", "set an alarm | for {d} from now", "let me know | in {d}",
             "ping me | in {d}", "alert me | in {d}", "wake me up | in {d}", "count down | {d}",
             "remind me | after {d}", "beep | in {d}", "start {a_n} minute | timer",
             "put a timer on | for {d}", "set the timer | for {d}", "start a countdown | for {d}",
             "set a countdown | for {d}", "time {d} | for me", "time me | for {d}", "set an alarm | to go off in {d}",
             "wake me | in {d}", "ring me | in {d}", "buzz me | in {d}", "give me a shout | in {d}",
             "give me a nudge | in {d}", "tell me | when it's been {d}", "let me know | when it's been {d}",
             "start the clock | for {d}", "set {a_n} minute | countdown", "put on {a_n} minute | timer"]
_TIMER_DOING = ["setting a timer | for {d}", "starting a countdown | for {d}", "reminding me | in {d}",
                "timing {d} | for me", "letting me know | in {d}", "giving me a shout | in {d}", "pinging me | in {d}",
                "starting {a_n} minute | timer"]
TIMER_SHAPES = [
    *_rotated(["{h}.", "please {h}.", "can you {h}?", "could you {h}, | please?", "{h}, | thanks.",
               "i'd like you to {h}.", "would you {h}?", "i was hoping you could {h}.", "is it possible to {h}?",
               "hey, | {h}.", "okay so | {h}.", "i need you to {h}.", "can you please {h}?", "{h}, | would you?",
               "just {h}, | please."], _TIMER_DO, every=3),
    *_rotated(["would you mind {h}?", "do you mind {h}?", "how about {h}?"], _TIMER_DOING),
    "i need a timer | for {d}.", "i want a timer | for {d}.", "i'd like a timer | for {d}, please.",
    "give me a timer | for {d}.", "timer | for {d}, please.", "countdown | for {d}, please.",
    "{a_n} minute timer, | please.", "i need {a_n} minute | timer.", "in {d}, | give me a reminder.",
    "in {d}, | give me a shout.", "{d} from now, | ring me.", "{d} from now, | let me know.",
    "i've got something in the oven, | set a timer for {d}.", "the pasta needs {d}, | can you time it?",
    "my tea needs {d}, | time it for me.", "i'm taking a nap, | wake me in {d}.", "i need to be reminded | in {d}.",
    "could i get a timer | for {d}?", "can i have a countdown | for {d}?", "let's do a timer, | {d}."]
CURRENCY_CONVERT_SHAPES = [f.replace("{x}", "{a} {s}") for f in [
    "convert {x} | to {d}.", "change {x} | into {d}.", "exchange {x} | for {d}.", "what's {x} | in {d}?",
    "how many {d} | do i get for {x}?", "how many {d} | is {x}?", "what are {x} | worth in {d}?",
    "i have {x}, | how much is that in {d}?", "{x}, | what's that in {d}?", "{x} to {d}, | please.",
    "what would i get in {d} | for {x}?",
    "what's {x} | worth in {d}?", "turn {x} | into {d}.", "swap {x} | for {d}.", "i need to change {x} | into {d}.",
    "what do {x} | come to in {d}?", "how much would {x} | be in {d}?", "how many {d} | can i get for {x}?",
    "how many {d} | will {x} get me?", "can you convert {x} | to {d}?", "could you convert {x} | into {d} for me?",
    "would you mind converting {x} | to {d}?", "i was hoping you could convert {x} | into {d}.",
    "is it possible to change {x} | into {d}?", "hey, | what's {x} in {d}?", "so, | how much is {x} in {d}?",
    "okay so | i've got {x}, what's that in {d}?", "{x} | in {d}, please.", "{x} | into {d}?",
    "i've got {x}. | how many {d} is that?", "tell me what {x} | is in {d}.",
    "if i change {x} | into {d}, how much do i get?", "i'm changing {x} | to {d}, how much will i get?"]]
TABLE_SHAPES = _heads_then_slots(
    [("book a table", "."), ("reserve a table", "."), ("i'd like a table", "."), ("we need a table", "."),
     ("get us a table", "."), ("can we have a table", "?"), ("find us a table", "."), ("make a reservation", "."),
     ("could you book us a table", "?"), ("i want to book a table", "."),
     ("can we eat", "?"), ("we'd like to eat", "."), ("i'd like to dine", "."), ("book us in", "."),
     ("reserve us a spot", "."), ("get us a spot", "."), ("save us a table", "."), ("hold a table", "."),
     ("i need a reservation", "."), ("can i get a reservation", "?"), ("put us down", "."),
     ("can you squeeze us in", "?"), ("is there a table free", "?"), ("book dinner", "."),
     ("would you mind booking a table", "?"), ("i was hoping you could book us a table", "."),
     ("is it possible to get a table", "?"), ("hey, can you reserve a table", "?"), ("okay so i need a reservation", "."),
     ("{slots}, | can you book that", "?")],
    [["at {r}"], ["for {party}"], ["at {t}", "for {t}"]])
