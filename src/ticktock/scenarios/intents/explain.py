"""Long answers: country and city profiles, how-to steps, counting and listing (many chunks)."""

from __future__ import annotations

import random

from ..text import number_words
from ..world import CITIES, COUNTRIES, DAYS, MONTHS
from .exchange import Exchange, phrase

HOW_TO = {
    "make tea": "first, boil some water. put a tea bag in a cup. pour the hot water on it. "
                "wait three minutes, then take the bag out.",
    "make coffee": "first, boil some water. put two spoons of coffee in a cup. pour the water "
                   "and stir. add milk if you like.",
    "make toast": "put a slice of bread in the toaster. wait two minutes until it is brown. "
                  "take it out and add some butter.",
    "cook rice": "wash one cup of rice. put it in a pot with two cups of water. cook it on low "
                 "heat for fifteen minutes.",
    "cook pasta": "boil a big pot of water and add salt. put the pasta in. cook it for ten "
                  "minutes, then drain the water.",
    "make a salad": "wash the lettuce and cut it. add some tomato and cucumber. put oil and "
                    "lemon on top and mix it.",
    "wash my hands": "wet your hands with water. use some soap and rub for twenty seconds. "
                     "rinse them and dry them with a towel.",
    "plant a seed": "fill a small pot with soil. push the seed a little way in. water it and "
                    "keep the pot in the sun.",
    "boil an egg": "put the egg in a pot of cold water. bring it to a boil. cook it for eight "
                   "minutes, then cool it in cold water.",
    "make pancakes": "mix flour, milk and one egg. heat a pan with a little butter. pour in "
                     "some batter and flip it after one minute.",
    "clean my room": "first, pick up things from the floor. put your clothes away. dust the "
                     "shelves, then vacuum the floor.",
    "pack for a trip": "make a list first. pack your clothes and shoes. add your toothbrush "
                       "and charger. do not forget your passport.",
}


def country_profile(rng: random.Random) -> Exchange:
    c = rng.choice(COUNTRIES)
    q = phrase(rng, ["tell me about | {c}.", "what do you know | about {c}?",
                     "can you describe | {c} for me?", "give me some facts | about {c}."], c=c.name)
    a = (f"{c.name} is a country in {c.continent}. its capital is {c.capital}. people there "
         f"speak {c.language}, and they pay with the {c.currency}.")
    return Exchange(q, a, intent="country_profile")


def city_profile(rng: random.Random) -> Exchange:
    city = rng.choice(CITIES)
    q = phrase(rng, ["tell me about the city | of {c}.", "what do you know | about {c}?",
                     "can you describe | the city of {c}?", "give me some facts | about {c}."],
               c=city.name)
    a = (f"{city.name} is a city in {city.country}. its travel code is {city.code}. i can find "
         f"flights and weather for {city.name}.")
    return Exchange(q, a, intent="city_profile")


def how_to(rng: random.Random) -> Exchange:
    task, steps = rng.choice(list(HOW_TO.items()))
    q = phrase(rng, ["how do i | {t}?", "can you tell me | how to {t}?", "explain how | to {t}.",
                     "what are the steps | to {t}?"], t=task)
    return Exchange(q, steps, intent="how_to")


def count_range(rng: random.Random) -> Exchange:
    a = rng.randint(1, 12)
    b = a + rng.randint(5, 9)
    q = phrase(rng, ["count from {a} | to {b}.", "please count from {a} | up to {b}.",
                     "can you count from {a} | to {b}?", "count up from {a} | to {b} for me."],
               a=number_words(a), b=number_words(b))
    return Exchange(q, ", ".join(str(i) for i in range(a, b + 1)) + ".", intent="count_range")


def list_days(rng: random.Random) -> Exchange:
    i = rng.randrange(7)
    q = phrase(rng, ["list the days of the week | starting with {d}.",
                     "name all the days | starting from {d}.",
                     "say the days of the week, | beginning with {d}.",
                     "can you list the weekdays | from {d} on?"], d=DAYS[i])
    return Exchange(q, ", ".join(DAYS[(i + j) % 7] for j in range(7)) + ".", intent="list_days")


def list_months(rng: random.Random) -> Exchange:
    i = rng.randrange(12)
    n = rng.randint(5, 8)
    j = (i + n - 1) % 12
    q = phrase(rng, ["name the months | from {a} to {b}.", "list the months | from {a} to {b}.",
                     "say the months | between {a} and {b}.", "can you list the months | from {a} to {b}?"],
               a=MONTHS[i], b=MONTHS[j])
    return Exchange(q, ", ".join(MONTHS[(i + k) % 12] for k in range(n)) + ".", intent="list_months")


INTENTS = [country_profile, country_profile, city_profile, how_to, how_to, how_to, count_range,
           list_days, list_months]


def long_request(rng: random.Random) -> Exchange:
    return rng.choice(INTENTS)(rng)
