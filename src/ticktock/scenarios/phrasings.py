"""The `phrasings` suite: requests written by hand, not drawn from the generator's templates.

The training world asks each thing in four to six fixed phrasings (`intents/`). Here the same closed
world (the same facts, tools and slot values) is asked for in other words: other sentence shapes,
fillers ("um", "so", "hey, quick one"), numbers said differently ("a quarter of an hour", "a hundred
bucks", "half past seven in the evening", "the two of us"). The expected replies and tool calls are
exactly the ones the model is trained to give (`intents.qa`'s reply functions, `intents.tools.confirm`),
so `ticktock eval --suite phrasings` measures how far the model's listening generalizes beyond its
templates. Each session is one user turn and the model's reply, rendered in held-out voices.

The requests were written once and are not tuned to any model's results.
"""

from __future__ import annotations

import random

from .compose import make_script, turn
from .intents import qa
from .intents.exchange import Exchange
from .intents.tools import tool_exchange
from .script import Script
from .world import COUNTRIES, Country

_COUNTRY = {c.name: c for c in COUNTRIES}


def ask(request: str, reply: str, intent: str) -> tuple[str, Exchange]:
    """A question written by hand and the reply the model is trained to give: (family, exchange)."""
    return "short_qa", Exchange(request, reply, intent=intent)


def tool(request: str, name: str, **args: object) -> tuple[str, Exchange]:
    """A tool request written by hand and the call (with its arguments) it must make: (family, exchange)."""
    return "tool_call", tool_exchange(request, name, **args)


def country(name: str) -> Country:
    """The world's country of that name (its capital, currency, language, continent)."""
    return _COUNTRY[name]


# (family, exchange): 22 questions and 29 tool requests, every tool at least five times
PHRASINGS: list[tuple[str, Exchange]] = [
    # questions
    ask("hey, quick one: france, what's its capital city?", qa.capital_reply(country("france")), "capital"),
    ask("i always forget the capital of australia. what is it again?", qa.capital_reply(country("australia")),
        "capital"),
    ask("name the capital of peru for me, please.", qa.capital_reply(country("peru")), "capital"),
    ask("um, which city would you say is germany's capital?", qa.capital_reply(country("germany")), "capital"),
    ask("if i travel to japan, what money will i need?", qa.currency_reply(country("japan")), "currency"),
    ask("so what do people pay with over in mexico?", qa.currency_reply(country("mexico")), "currency"),
    ask("if i go to brazil, what language will i hear?", qa.language_reply(country("brazil")), "language"),
    ask("what's the language folks use in sweden?", qa.language_reply(country("sweden")), "language"),
    ask("kenya, is that in africa or in asia?", qa.continent_reply(country("kenya")), "continent"),
    ask("tell me which continent chile belongs to.", qa.continent_reply(country("chile")), "continent"),
    ask("what do you get if you add seven and nine?", qa.arithmetic_reply(7, "plus", 9), "arithmetic"),
    ask("um, take twelve away from twenty, what's left?", qa.arithmetic_reply(20, "minus", 12), "arithmetic"),
    ask("multiply six by eight for me.", qa.arithmetic_reply(6, "times", 8), "arithmetic"),
    ask("eleven and four added together gives what?", qa.arithmetic_reply(11, "plus", 4), "arithmetic"),
    ask("so, nine multiplied by seven is how much?", qa.arithmetic_reply(9, "times", 7), "arithmetic"),
    ask("subtract five from thirteen.", qa.arithmetic_reply(13, "minus", 5), "arithmetic"),
    ask("hmm, what colour would you say a banana is?", qa.colour_reply("a banana"), "colour"),
    ask("if it's wednesday today, what's tomorrow?", qa.day_reply("wednesday", after=True), "day_after"),
    ask("if today is monday, what day was yesterday?", qa.day_reply("monday", after=False), "day_before"),
    ask("once june is over, which month starts?", qa.month_after_reply("june"), "month_after"),
    ask("does september have thirty or thirty one days?", qa.month_days_reply("september"), "month_days"),
    ask("a week is how many days long?", qa.time_units_reply("days", "week"), "time_units"),
    # flights
    tool("i'd like to fly out of boston and land in chicago on thursday.", "find_flights",
          origin="BOS", dest="CHI", day="Thu"),
    tool("get me on a plane from paris to rome next tuesday.", "find_flights", origin="PAR", dest="ROM", day="Tue"),
    tool("uh, are there planes going from sydney to singapore on sunday?", "find_flights",
          origin="SYD", dest="SIN", day="Sun"),
    tool("is anything flying london to madrid this friday?", "find_flights", origin="LON", dest="MAD", day="Fri"),
    tool("so i need to get from seoul to osaka by plane on monday.", "find_flights",
          origin="SEL", dest="OSA", day="Mon"),
    tool("search for a flight, delhi to dubai, leaving saturday.", "find_flights",
          origin="DEL", dest="DXB", day="Sat"),
    # weather
    tool("is it going to be sunny in paris this friday?", "get_weather", city="PAR", day="Fri"),
    tool("do i need an umbrella in london on monday?", "get_weather", city="LON", day="Mon"),
    tool("what's the forecast looking like for tokyo on saturday?", "get_weather", city="TYO", day="Sat"),
    tool("how warm will it be in madrid on wednesday?", "get_weather", city="MAD", day="Wed"),
    tool("should i pack a coat for berlin, um, on tuesday?", "get_weather", city="BER", day="Tue"),
    tool("weather check: new york, sunday.", "get_weather", city="NYC", day="Sun"),
    # timers
    tool("give me a quarter of an hour on the timer.", "set_timer", minutes=15),
    tool("start a countdown for half an hour.", "set_timer", minutes=30),
    tool("time an hour and a half for me, please.", "set_timer", minutes=90),
    tool("um, ring me in ten minutes.", "set_timer", minutes=10),
    tool("put a three minute timer on.", "set_timer", minutes=3),
    tool("timer, forty five minutes.", "set_timer", minutes=45),
    # currency
    tool("how many euros would i get for a hundred dollars?", "convert_currency", amount=100, src="USD", dst="EUR"),
    tool("turn fifty pounds into yen for me.", "convert_currency", amount=50, src="GBP", dst="JPY"),
    tool("so what's a thousand yen in dollars?", "convert_currency", amount=1000, src="JPY", dst="USD"),
    tool("if i change twenty francs, how many pesos is that?", "convert_currency", amount=20, src="CHF", dst="MXN"),
    tool("i've got two hundred rupees, what's that in pounds?", "convert_currency",
          amount=200, src="INR", dst="GBP"),
    tool("twenty five canadian dollars, how much in euros?", "convert_currency", amount=25, src="CAD", dst="EUR"),
    # tables
    tool("reserve a spot at sakura for the two of us at seven thirty in the evening.", "book_table",
          restaurant="sakura", people=2, time="19:30"),
    tool("we're a party of four, can we eat at little italy at eight tonight?", "book_table",
          restaurant="little italy", people=4, time="20:00"),
    tool("just me, at the sunny cafe, six in the evening please.", "book_table",
          restaurant="sunny cafe", people=1, time="18:00"),
    tool("i want dinner at ocean grill for six people, half past nine in the evening.", "book_table",
          restaurant="ocean grill", people=6, time="21:30"),
    tool("could you get three of us into golden dragon at five pm?", "book_table",
          restaurant="golden dragon", people=3, time="17:00"),
]


def request_script(rng: random.Random, family: str, ex: Exchange) -> Script:
    """A session of one written request: the user asks `ex`, the model replies (and calls its tool)."""
    return make_script(rng, family, turn(rng, ex, ["answer"]), answer=ex.reply, tool_call=ex.call)


def phrasing_script(i: int, rng: random.Random) -> Script:
    """Session i of the `phrasings` suite: PHRASINGS[i] asked and answered."""
    return request_script(rng, *PHRASINGS[i])
