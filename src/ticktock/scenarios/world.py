"""The closed world: a small knowledge base and deterministic mock tools.

Facts are lower-case spoken English (what the user says and the model answers); tool
calls are JSON with codes (`{"name": "find_flights", "arguments": {"origin": "TYO", ...}}`; a
request that needs two tools at once gets a JSON list of both calls) and tool results are short
deterministic strings derived from a CRC of the call's arguments, so the same call always returns
the same result.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Sequence

from .script import parse_calls


@dataclass(frozen=True)
class Country:
    name: str
    capital: str
    currency: str
    continent: str
    language: str


COUNTRIES = [Country(*row.split("|")) for row in """\
france|paris|euro|europe|french
germany|berlin|euro|europe|german
italy|rome|euro|europe|italian
spain|madrid|euro|europe|spanish
portugal|lisbon|euro|europe|portuguese
greece|athens|euro|europe|greek
ireland|dublin|euro|europe|english
austria|vienna|euro|europe|german
the netherlands|amsterdam|euro|europe|dutch
finland|helsinki|euro|europe|finnish
sweden|stockholm|krona|europe|swedish
norway|oslo|krone|europe|norwegian
denmark|copenhagen|krone|europe|danish
poland|warsaw|zloty|europe|polish
hungary|budapest|forint|europe|hungarian
switzerland|bern|franc|europe|german
britain|london|pound|europe|english
russia|moscow|ruble|europe|russian
turkey|ankara|lira|asia|turkish
egypt|cairo|pound|africa|arabic
kenya|nairobi|shilling|africa|swahili
nigeria|abuja|naira|africa|english
morocco|rabat|dirham|africa|arabic
ghana|accra|cedi|africa|english
japan|tokyo|yen|asia|japanese
china|beijing|yuan|asia|chinese
south korea|seoul|won|asia|korean
india|new delhi|rupee|asia|hindi
thailand|bangkok|baht|asia|thai
vietnam|hanoi|dong|asia|vietnamese
indonesia|jakarta|rupiah|asia|indonesian
the philippines|manila|peso|asia|filipino
australia|canberra|dollar|oceania|english
new zealand|wellington|dollar|oceania|english
canada|ottawa|dollar|north america|english
the united states|washington|dollar|north america|english
mexico|mexico city|peso|north america|spanish
brazil|brasilia|real|south america|portuguese
argentina|buenos aires|peso|south america|spanish
peru|lima|sol|south america|spanish
chile|santiago|peso|south america|spanish
colombia|bogota|peso|south america|spanish""".splitlines()]


@dataclass(frozen=True)
class City:
    name: str
    code: str
    country: str


CITIES = [City(*row.split("|")) for row in """\
tokyo|TYO|japan
osaka|OSA|japan
sapporo|SPK|japan
seoul|SEL|south korea
beijing|BJS|china
shanghai|SHA|china
singapore|SIN|singapore
bangkok|BKK|thailand
sydney|SYD|australia
delhi|DEL|india
dubai|DXB|the emirates
cairo|CAI|egypt
london|LON|britain
paris|PAR|france
berlin|BER|germany
rome|ROM|italy
madrid|MAD|spain
lisbon|LIS|portugal
new york|NYC|the united states
chicago|CHI|the united states
boston|BOS|the united states
toronto|YTO|canada
lima|LIM|peru
denver|DEN|the united states""".splitlines()]
CITY_BY_CODE = {c.code: c for c in CITIES}

DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
DAY_CODE = {d: d[:3].capitalize() for d in DAYS}
CODE_DAY = {v: k for k, v in DAY_CODE.items()}
MONTHS = ("january february march april may june july august september october november "
          "december").split()
MONTH_DAYS = dict(zip(MONTHS, (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)))

COLOURS = dict(row.split("|") for row in """\
the sky|blue
grass|green
snow|white
coal|black
a banana|yellow
a tomato|red
a carrot|orange
a lemon|yellow
milk|white
chocolate|brown
a strawberry|red
a lime|green
a pumpkin|orange
an eggplant|purple
a cherry|red
the sun|yellow
a frog|green
a crow|black""".splitlines())

# code -> (spoken name, plural, units per dollar)
CURRENCIES = {
    "USD": ("dollar", "dollars", 1.0), "EUR": ("euro", "euros", 0.9),
    "GBP": ("pound", "pounds", 0.8), "JPY": ("yen", "yen", 150.0),
    "CNY": ("yuan", "yuan", 7.0), "KRW": ("won", "won", 1300.0),
    "INR": ("rupee", "rupees", 80.0), "CAD": ("canadian dollar", "canadian dollars", 1.4),
    "MXN": ("peso", "pesos", 17.0), "CHF": ("franc", "francs", 0.9),
}
RESTAURANTS = ("blue moon, green garden, golden dragon, little italy, sakura, the red door, "
               "ocean grill, sunny cafe, the old mill, river house, star kitchen, mama rosa").split(", ")
WEATHER = ("sunny", "cloudy", "rainy", "windy", "snowy", "foggy")
AIRLINES = ("JL", "NH", "KE", "BA", "AF", "LH", "UA", "AA", "SQ", "EK")


def _crc(s: str) -> int:
    return zlib.crc32(s.encode())


def find_flights(origin: str, dest: str, day: str) -> str:
    h = _crc(f"flight|{origin}|{dest}|{day}")
    hour, minute = 6 + h % 15, (h >> 4) % 12 * 5
    price = 80 + (h >> 8) % 60 * 10
    return f"flight {AIRLINES[(h >> 16) % len(AIRLINES)]}{100 + (h >> 20) % 900} at {hour}:{minute:02d}, {price} dollars"


def get_weather(city: str, day: str) -> str:
    h = _crc(f"weather|{city}|{day}")
    return f"{WEATHER[h % len(WEATHER)]}, {5 + (h >> 8) % 28} degrees"


def set_timer(minutes: int) -> str:
    return f"timer set, {minutes} minutes"


def convert_currency(amount: int, src: str, dst: str) -> str:
    value = amount / CURRENCIES[src][2] * CURRENCIES[dst][2]
    return f"{amount} {src} is {round(value)} {dst}"


def book_table(restaurant: str, people: int, time: str) -> str:
    return f"booked, code {1000 + _crc(f'table|{restaurant}|{people}|{time}') % 9000}"


TOOLS = {f.__name__: f for f in (find_flights, get_weather, set_timer, convert_currency, book_table)}


def format_call(name: str, **kwargs: object) -> str:
    """`format_call('set_timer', minutes=10)` -> '{"name": "set_timer", "arguments": {"minutes": 10}}'.

    JSON, the way function-calling LLMs write calls: a call is tens of tokens (docs/design.md §1), which is
    what drafting a tool call ahead of the audio saves."""
    return json.dumps({"name": name, "arguments": kwargs})


def format_calls(calls: Sequence[str]) -> str:
    """Calls made at once (`format_call` strings) -> one JSON list, as parallel function calling writes
    them: '[{"name": "set_timer", ...}, {"name": "get_weather", ...}]' (two calls: 78-115 tokens)."""
    return json.dumps([json.loads(c) for c in calls])


def run_tool(call: str) -> str:
    """Execute a tool unit's call (or list of calls, results joined by '; ') against the mock tools;
    raises ValueError on unknown/bad calls."""
    results = []
    for name, kwargs in parse_calls(call):
        if name not in TOOLS:
            raise ValueError(f"unknown tool {name!r}")
        try:
            results.append(TOOLS[name](**kwargs))
        except (TypeError, KeyError) as e:
            raise ValueError(f"bad arguments in {call!r}: {e}") from e
    return "; ".join(results)


def tool_result(call: str) -> str:
    """What the model hears after calling `call` on the mock tools: `run_tool`'s result, or for a malformed call
    (the model's mistake, not ours) an error result, as in use."""
    try:
        return run_tool(call)
    except Exception as err:
        return f"error: {err}"
