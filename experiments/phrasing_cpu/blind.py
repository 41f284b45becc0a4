"""A second set of requests in a user's own words, written blind: without sight of the training templates or of the
`phrasings` suite (a check that a change made while looking at `phrasings` did not just fit it)."""

from __future__ import annotations

from ticktock.scenarios.intents import qa
from ticktock.scenarios.intents.exchange import Exchange
# the `phrasings` suite's own constructors: a (family, Exchange) with the trained reply or tool call
from ticktock.scenarios.phrasings import _c, _qa, _tool

BLIND: list[tuple[str, Exchange]] = [
    # --- questions (20) ---
    _qa("what's the capital city of kenya?", qa.capital_reply(_c("kenya")), "capital"),
    _qa("hey, which city is the capital of australia?", qa.capital_reply(_c("australia")), "capital"),
    _qa("i always forget this one. what is canada's capital?", qa.capital_reply(_c("canada")), "capital"),
    _qa("what money do they use in japan?", qa.currency_reply(_c("japan")), "currency"),
    _qa("if i travel to poland, what currency will i need?", qa.currency_reply(_c("poland")), "currency"),
    _qa("what language do people speak in brazil?", qa.language_reply(_c("brazil")), "language"),
    _qa("uh, which language is spoken in vietnam?", qa.language_reply(_c("vietnam")), "language"),
    _qa("which continent is egypt on?", qa.continent_reply(_c("egypt")), "continent"),
    _qa("remind me, what continent is argentina part of?", qa.continent_reply(_c("argentina")), "continent"),
    _qa("what is seven plus eight?", qa.arithmetic_reply(7, "plus", 8), "arithmetic"),
    _qa("if i add twelve and nine, what do i get?", qa.arithmetic_reply(12, "plus", 9), "arithmetic"),
    _qa("what's nineteen minus six?", qa.arithmetic_reply(19, "minus", 6), "arithmetic"),
    _qa("what do you get if you take five away from fourteen?", qa.arithmetic_reply(14, "minus", 5), "arithmetic"),
    _qa("quick one, what's six times nine?", qa.arithmetic_reply(6, "times", 9), "arithmetic"),
    _qa("how much is eleven multiplied by four?", qa.arithmetic_reply(11, "times", 4), "arithmetic"),
    _qa("what colour is an eggplant?", qa.colour_reply("an eggplant"), "colour"),
    _qa("if today is saturday, what day was yesterday?", qa.day_reply("saturday", after=False), "day_before"),
    _qa("which month follows august?", qa.month_after_reply("august"), "month_after"),
    _qa("how many days has november got?", qa.month_days_reply("november"), "month_days"),
    _qa("tell me how many seconds make up a minute.", qa.time_units_reply("seconds", "minute"), "time_units"),
    # --- find_flights (6) ---
    _tool("find me a flight from boston to london on thursday.", "find_flights", origin="BOS", dest="LON", day="Thu"),
    _tool("i'm heading to seoul on friday, leaving from tokyo. any flights?", "find_flights",
          origin="TYO", dest="SEL", day="Fri"),
    _tool("are there any flights out of chicago to denver this sunday?", "find_flights",
          origin="CHI", dest="DEN", day="Sun"),
    _tool("um, on tuesday i need to fly madrid to lisbon.", "find_flights", origin="MAD", dest="LIS", day="Tue"),
    _tool("could you check flights to sydney from singapore for wednesday, please?", "find_flights",
          origin="SIN", dest="SYD", day="Wed"),
    _tool("monday, delhi to dubai. what flights are there?", "find_flights", origin="DEL", dest="DXB", day="Mon"),
    # --- get_weather (6) ---
    _tool("what's the weather going to be like in paris on saturday?", "get_weather", city="PAR", day="Sat"),
    _tool("will it snow in sapporo on sunday?", "get_weather", city="SPK", day="Sun"),
    _tool("should i bring a jacket to berlin on thursday? what's the forecast?", "get_weather", city="BER", day="Thu"),
    _tool("forecast for cairo on monday, please.", "get_weather", city="CAI", day="Mon"),
    _tool("i'll be in toronto on wednesday, what's the weather looking like there?", "get_weather",
          city="YTO", day="Wed"),
    _tool("how warm is it going to be in lima this friday?", "get_weather", city="LIM", day="Fri"),
    # --- set_timer (6) ---
    _tool("set a timer for twenty five minutes.", "set_timer", minutes=25),
    _tool("start a one hour timer, please.", "set_timer", minutes=60),
    _tool("i'm boiling eggs, give me a timer for eight minutes.", "set_timer", minutes=8),
    _tool("could you count down a quarter of an hour for me?", "set_timer", minutes=15),
    _tool("the roast needs an hour and a half, can you set a timer?", "set_timer", minutes=90),
    _tool("timer for three minutes, please.", "set_timer", minutes=3),
    # --- convert_currency (5) ---
    _tool("how much is a hundred american dollars in mexican pesos?", "convert_currency",
          amount=100, src="USD", dst="MXN"),
    _tool("convert fifty british pounds into yen.", "convert_currency", amount=50, src="GBP", dst="JPY"),
    _tool("i've got two hundred euros. how many swiss francs is that?", "convert_currency",
          amount=200, src="EUR", dst="CHF"),
    _tool("what would a thousand indian rupees be in american dollars?", "convert_currency",
          amount=1000, src="INR", dst="USD"),
    _tool("how many korean won do i get for twenty canadian dollars?", "convert_currency",
          amount=20, src="CAD", dst="KRW"),
    # --- book_table (5) ---
    _tool("book a table for two at sakura at seven thirty tonight.", "book_table",
          restaurant="sakura", people=2, time="19:30"),
    _tool("could you get us a table at mama rosa, three people, eight o'clock this evening?", "book_table",
          restaurant="mama rosa", people=3, time="20:00"),
    _tool("i'd like to reserve golden dragon for six people at half past six in the evening.", "book_table",
          restaurant="golden dragon", people=6, time="18:30"),
    _tool("sunny cafe, a table for one, at five this evening.", "book_table",
          restaurant="sunny cafe", people=1, time="17:00"),
    _tool("we're a party of eight. can you book river house for nine thirty tonight?", "book_table",
          restaurant="river house", people=8, time="21:30"),
]
