"""A second set of requests in a user's own words, written blind: without sight of the training templates or of the
`phrasings` suite (a check that a change made while looking at `phrasings` did not just fit it)."""

from __future__ import annotations

from ticktock.scenarios.intents import qa
from ticktock.scenarios.intents.exchange import Exchange
# the `phrasings` suite's own constructors: a (family, Exchange) with the trained reply or tool call
from ticktock.scenarios.phrasings import ask, country, tool

BLIND: list[tuple[str, Exchange]] = [
    # --- questions (20) ---
    ask("what's the capital city of kenya?", qa.capital_reply(country("kenya")), "capital"),
    ask("hey, which city is the capital of australia?", qa.capital_reply(country("australia")), "capital"),
    ask("i always forget this one. what is canada's capital?", qa.capital_reply(country("canada")), "capital"),
    ask("what money do they use in japan?", qa.currency_reply(country("japan")), "currency"),
    ask("if i travel to poland, what currency will i need?", qa.currency_reply(country("poland")), "currency"),
    ask("what language do people speak in brazil?", qa.language_reply(country("brazil")), "language"),
    ask("uh, which language is spoken in vietnam?", qa.language_reply(country("vietnam")), "language"),
    ask("which continent is egypt on?", qa.continent_reply(country("egypt")), "continent"),
    ask("remind me, what continent is argentina part of?", qa.continent_reply(country("argentina")), "continent"),
    ask("what is seven plus eight?", qa.arithmetic_reply(7, "plus", 8), "arithmetic"),
    ask("if i add twelve and nine, what do i get?", qa.arithmetic_reply(12, "plus", 9), "arithmetic"),
    ask("what's nineteen minus six?", qa.arithmetic_reply(19, "minus", 6), "arithmetic"),
    ask("what do you get if you take five away from fourteen?", qa.arithmetic_reply(14, "minus", 5), "arithmetic"),
    ask("quick one, what's six times nine?", qa.arithmetic_reply(6, "times", 9), "arithmetic"),
    ask("how much is eleven multiplied by four?", qa.arithmetic_reply(11, "times", 4), "arithmetic"),
    ask("what colour is an eggplant?", qa.colour_reply("an eggplant"), "colour"),
    ask("if today is saturday, what day was yesterday?", qa.day_reply("saturday", after=False), "day_before"),
    ask("which month follows august?", qa.month_after_reply("august"), "month_after"),
    ask("how many days has november got?", qa.month_days_reply("november"), "month_days"),
    ask("tell me how many seconds make up a minute.", qa.time_units_reply("seconds", "minute"), "time_units"),
    # --- find_flights (6) ---
    tool("find me a flight from boston to london on thursday.", "find_flights", origin="BOS", dest="LON", day="Thu"),
    tool("i'm heading to seoul on friday, leaving from tokyo. any flights?", "find_flights",
          origin="TYO", dest="SEL", day="Fri"),
    tool("are there any flights out of chicago to denver this sunday?", "find_flights",
          origin="CHI", dest="DEN", day="Sun"),
    tool("um, on tuesday i need to fly madrid to lisbon.", "find_flights", origin="MAD", dest="LIS", day="Tue"),
    tool("could you check flights to sydney from singapore for wednesday, please?", "find_flights",
          origin="SIN", dest="SYD", day="Wed"),
    tool("monday, delhi to dubai. what flights are there?", "find_flights", origin="DEL", dest="DXB", day="Mon"),
    # --- get_weather (6) ---
    tool("what's the weather going to be like in paris on saturday?", "get_weather", city="PAR", day="Sat"),
    tool("will it snow in sapporo on sunday?", "get_weather", city="SPK", day="Sun"),
    tool("should i bring a jacket to berlin on thursday? what's the forecast?", "get_weather", city="BER", day="Thu"),
    tool("forecast for cairo on monday, please.", "get_weather", city="CAI", day="Mon"),
    tool("i'll be in toronto on wednesday, what's the weather looking like there?", "get_weather",
          city="YTO", day="Wed"),
    tool("how warm is it going to be in lima this friday?", "get_weather", city="LIM", day="Fri"),
    # --- set_timer (6) ---
    tool("set a timer for twenty five minutes.", "set_timer", minutes=25),
    tool("start a one hour timer, please.", "set_timer", minutes=60),
    tool("i'm boiling eggs, give me a timer for eight minutes.", "set_timer", minutes=8),
    tool("could you count down a quarter of an hour for me?", "set_timer", minutes=15),
    tool("the roast needs an hour and a half, can you set a timer?", "set_timer", minutes=90),
    tool("timer for three minutes, please.", "set_timer", minutes=3),
    # --- convert_currency (5) ---
    tool("how much is a hundred american dollars in mexican pesos?", "convert_currency",
          amount=100, src="USD", dst="MXN"),
    tool("convert fifty british pounds into yen.", "convert_currency", amount=50, src="GBP", dst="JPY"),
    tool("i've got two hundred euros. how many swiss francs is that?", "convert_currency",
          amount=200, src="EUR", dst="CHF"),
    tool("what would a thousand indian rupees be in american dollars?", "convert_currency",
          amount=1000, src="INR", dst="USD"),
    tool("how many korean won do i get for twenty canadian dollars?", "convert_currency",
          amount=20, src="CAD", dst="KRW"),
    # --- book_table (5) ---
    tool("book a table for two at sakura at seven thirty tonight.", "book_table",
          restaurant="sakura", people=2, time="19:30"),
    tool("could you get us a table at mama rosa, three people, eight o'clock this evening?", "book_table",
          restaurant="mama rosa", people=3, time="20:00"),
    tool("i'd like to reserve golden dragon for six people at half past six in the evening.", "book_table",
          restaurant="golden dragon", people=6, time="18:30"),
    tool("sunny cafe, a table for one, at five this evening.", "book_table",
          restaurant="sunny cafe", people=1, time="17:00"),
    tool("we're a party of eight. can you book river house for nine thirty tonight?", "book_table",
          restaurant="river house", people=8, time="21:30"),
]
