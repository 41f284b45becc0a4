"""`train base`'s data `multi-engine`: phase shifts, prompts and phrasings of the training sessions."""

from __future__ import annotations

import json
import random
import re

import pytest

from ticktock.scenarios.compose import DEFAULT_SYSTEM_PROMPT, SYSTEM_PROMPTS, TOOLS_LINE
from ticktock.scenarios.intents import short_question, tool_request
from ticktock.scenarios.intents.exchange import FILLERS, LEADS, TAILS, fresh_phrasings
from ticktock.scenarios.phrasings import PHRASINGS
from ticktock.scenarios.prompts import training_prompt
from ticktock.scenarios.suites import SUITES, phase_shifted, script_at
from ticktock.scenarios.timeline import realize


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def test_phase_shift_moves_every_label_with_the_audio() -> None:
    script = script_at("quick", 3)
    _, before = realize(script)
    _, after = realize(phase_shifted(script_at("quick", 3), 0.37))
    assert [round(b["start"] - a["start"], 6) for a, b in zip(before.words, after.words)] == [0.37] * len(before.words)


def test_jitter_suites_use_the_same_rule() -> None:
    shifted, plain = script_at("heldout-jitter", 5), script_at("heldout", 5)
    assert 0 <= shifted.plan["lead_s"] - plain.plan["lead_s"] <= 1.0
    assert SUITES["heldout-jitter"].jitter_of == "heldout"


def test_training_prompts_include_the_live_default() -> None:
    rng = random.Random(0)
    drawn = [training_prompt(rng) for _ in range(500)]
    assert DEFAULT_SYSTEM_PROMPT in drawn and len(set(drawn)) > len(SYSTEM_PROMPTS)
    assert all(p.endswith(TOOLS_LINE) for p in drawn)
    assert 0.2 < drawn.count(DEFAULT_SYSTEM_PROMPT) / len(drawn) < 0.45


def test_suites_keep_their_prompts_and_phrasings() -> None:
    """Without fresh phrasings the draws are the suites' own: the same script as the suite makes."""
    with fresh_phrasings(False):
        assert script_at("quick", 4).to_dict() == script_at("quick", 4).to_dict()
    for i in range(30):
        assert script_at("heldout", i).system in {f"{p} {TOOLS_LINE}" for p in SYSTEM_PROMPTS}


def test_fresh_phrasings_add_wordings_fillers_leads_and_tails() -> None:
    plain = {short_question(random.Random(i)).text for i in range(300)}
    with fresh_phrasings():
        fresh = {short_question(random.Random(i)).text for i in range(300)}
    assert fresh - plain and any(t.startswith(tuple(FILLERS)) for t in fresh)
    assert any(lead in t for t in fresh for lead in LEADS)
    assert any(t.endswith(f", {tail}?") for t in fresh for tail in TAILS["?"])
    assert not any(lead in t for t in plain for lead in LEADS)


def test_no_training_phrasing_is_a_phrasings_sentence() -> None:
    """The `phrasings` suite stays held out: no draw of the intents (fresh or not; filler, lead-in and tail
    stripped) is one of its requests."""
    held = {_norm(ex.text) for _, ex in PHRASINGS}
    fillers = tuple(_norm(f) + " " for f in FILLERS)
    leads = tuple(_norm(f) + " " for f in LEADS)
    tails = tuple(" " + _norm(t) for t in {*TAILS["?"], *TAILS[""]})
    seen = set()
    with fresh_phrasings():
        for i in range(6000):
            rng = random.Random(i)
            for text in (short_question(rng).text, tool_request(rng, 0.0).text):
                t = _norm(text)
                seen.add(t)
                t = t[len(next((f for f in fillers if t.startswith(f)), "")):]
                seen.add(t)
                t = t[len(next((f for f in leads if t.startswith(f)), "")):]
                seen.add(t)
                seen.add(t[:len(t) - len(next((f for f in tails if t.endswith(f)), ""))])
    assert not seen & held



def _composed_pools() -> dict[str, list[str]]:
    from ticktock.scenarios.intents import shapes

    pools = {k: v for k, v in vars(shapes).items() if k.endswith("_SHAPES") and isinstance(v, list)}
    return {**pools, **{f"ARITHMETIC_SHAPES[{op}]": v for op, v in shapes.ARITHMETIC_SHAPES.items()}}


def test_composed_requests_fill_their_slots_and_keep_pause_marks() -> None:
    """Every composed template names only slots its intent fills, and can be cut at a pause mark into parts that
    each say something (the pause-handling family cuts requests there)."""
    import string

    slots = {"c", "t", "d", "m", "s", "b", "a", "o", "day", "a_n", "r", "party"}
    pools = _composed_pools()
    assert len(pools) >= 17 and sum(map(len, pools.values())) > 3000
    for name, pool in pools.items():
        for tpl in pool:
            named = {f for _, f, _, _ in string.Formatter().parse(tpl) if f}
            assert named and named <= slots, (name, tpl)
            parts = tpl.split("|")
            assert len(parts) >= 2 and all(_norm(p) for p in parts), (name, tpl)


def test_a_timer_said_by_its_minutes_takes_the_right_article() -> None:
    """"an eight minute timer", never "a eight": the composed and `more` wordings say the number after its article."""
    from ticktock.scenarios.intents.tools import timer

    with fresh_phrasings():
        texts = [timer(random.Random(i)).text for i in range(3000)]
    assert not [t for t in texts if re.search(r"\ba (eight|eleven)", t)]
    assert any("an eight minute" in t for t in texts) and any("a five minute" in t for t in texts)


def test_composed_requests_name_each_slot_of_their_intent_once() -> None:
    """Every composed template says each slot its intent needs exactly once (a timer by its duration or by its
    number of minutes), and no pool holds the same template twice."""
    import string
    from collections import Counter

    need = {"FLIGHTS_SHAPES": [{"o", "d", "day"}], "WEATHER_SHAPES": [{"c", "day"}], "TIMER_SHAPES": [{"d"}, {"a_n"}],
            "CURRENCY_CONVERT_SHAPES": [{"a", "s", "d"}], "TABLE_SHAPES": [{"r", "party", "t"}],
            "CAPITAL_SHAPES": [{"c"}], "CURRENCY_SHAPES": [{"c"}], "LANGUAGE_SHAPES": [{"c"}],
            "CONTINENT_SHAPES": [{"c"}], "COLOUR_SHAPES": [{"t"}], "DAY_AFTER_SHAPES": [{"d"}],
            "DAY_BEFORE_SHAPES": [{"d"}], "MONTH_AFTER_SHAPES": [{"m"}], "MONTH_DAYS_SHAPES": [{"m"}],
            "TIME_UNITS_SHAPES": [{"s", "b"}]}
    for name, pool in _composed_pools().items():
        wanted = [{"a", "b"}] if name.startswith("ARITHMETIC_SHAPES[") else need[name]
        assert len(set(pool)) == len(pool), name
        for tpl in pool:
            named = Counter(f for _, f, _, _ in string.Formatter().parse(tpl) if f)
            assert set(named) in wanted and set(named.values()) == {1}, (name, tpl)


def test_composed_subtraction_keeps_the_replys_operand_order() -> None:
    """"subtract five from thirteen" is 13 - 5: a composed request may name the operands in either order; the reply
    (and so the label) is always the computation's."""
    from ticktock.scenarios.intents import qa
    from ticktock.scenarios.text import number_words

    value = {number_words(n): n for n in range(1, 21)}
    numbers = "|".join(sorted(value, key=len, reverse=True))
    reversed_said = 0
    with fresh_phrasings():
        for i in range(4000):
            ex = qa.arithmetic(random.Random(i))
            m = re.search(rf"(?:subtract|take) ({numbers}) (?:away )?from ({numbers})\b", ex.text)
            if m:
                reversed_said += 1
                b, a = value[m.group(1)], value[m.group(2)]
                assert ex.reply == qa.arithmetic_reply(a, "minus", b), ex.text
    assert reversed_said > 30


def test_the_composed_share_says_how_many_requests_are_composed() -> None:
    """`fresh_phrasings(composed_share=0)` draws from the listed templates only; the default composes some."""
    from ticktock.scenarios.intents import qa

    def composed_only(share: float) -> int:  # words that only the composed arithmetic shapes say
        with fresh_phrasings(composed_share=share):
            texts = [qa.arithmetic(random.Random(i)).text for i in range(2000)]
        return sum(any(w in t for w in ("subtract", "sum of", "product of", "multiply")) for t in texts)

    assert composed_only(0.0) == 0 and composed_only(0.5) > 200 and composed_only(1.0) > composed_only(0.5)
    with pytest.raises(ValueError, match="composed_share"):
        with fresh_phrasings(composed_share=1.5):
            pass


def test_shapes_keep_every_sentence_once_in_the_order_of_their_forms() -> None:
    """A QA intent's `Shapes` is its sentences, form after form, and every form says something."""
    from ticktock.scenarios.intents.shapes import Shapes

    grouped = {k: v for k, v in _composed_pools().items() if isinstance(v, Shapes)}
    assert len(grouped) == 13  # the ten QA intents and arithmetic's three operations
    for name, shapes in grouped.items():
        assert len(shapes.forms) >= 3 and all(shapes.forms), name
        assert list(shapes) == [s for form in shapes.forms for s in form], name


def test_by_form_draws_each_form_alike_and_off_changes_no_draw() -> None:
    """`by_form`: a form of one sentence is drawn as often as one of a hundred; off, a `Shapes` draws exactly as
    the flat list of its sentences (the draws training made before forms)."""
    from ticktock.scenarios.intents.exchange import phrase
    from ticktock.scenarios.intents.shapes import Shapes

    many = [f"how many days does {{m}} have, {n} times over?" for n in range(99)]
    shapes = Shapes(many, ["if last month was {m}, which one is this?"])

    def rare(by_form: bool, composed) -> list[bool]:
        with fresh_phrasings(composed_share=1.0, by_form=by_form):
            return ["last month" in phrase(random.Random(i), ["how long is {m}?"], composed=composed, m="may")
                    for i in range(400)]

    assert sum(rare(False, shapes)) < 15 and 150 < sum(rare(True, shapes)) < 250
    assert rare(False, shapes) == rare(False, list(shapes)) == rare(True, list(shapes))  # a plain list: one form


def test_a_draw_that_says_a_held_out_request_is_drawn_again() -> None:
    """A template that can say a `phrasings` request (here, one of the suite's own, framed or not) is redrawn; one
    that can say nothing else is an error, not a leak."""
    from ticktock.scenarios.intents.exchange import phrase

    held = "subtract five from thirteen"
    with fresh_phrasings():
        drawn = [phrase(random.Random(i), ["subtract {b} from {a}.", "take {b} off {a}."], a="thirteen", b="five")
                 for i in range(300)]
        assert all("take five off thirteen" in _norm(t) for t in drawn)
        with pytest.raises(ValueError, match="phrasings"):
            phrase(random.Random(0), ["subtract {b} from {a}."], a="thirteen", b="five")
    assert phrase(random.Random(0), ["subtract {b} from {a}."], a="thirteen", b="five") == held + "."


MINUTES_SAID = {"an hour and a half": 90, "three quarters of an hour": 45, "a quarter of an hour": 15,
                "a quarter hour": 15, "half an hour": 30, "a half hour": 30, "an hour": 60, "one hour": 60}


def test_fresh_phrasings_say_values_in_other_words_with_the_same_call() -> None:
    """Under fresh phrasings a duration, an amount, a party and an evening time are sometimes said in other words
    ("an hour and a half", "a hundred", "the two of us", "half past seven"); the call holds the same value. Off,
    no value is said otherwise."""
    from ticktock.scenarios.intents import qa, tools
    from ticktock.scenarios.text import number_words

    def draws(fresh: bool):
        with fresh_phrasings(fresh):
            for i in range(1500):
                rng = random.Random(i)
                yield from (tools.timer(rng, 0.0), tools.currency(rng, 0.0), tools.table(rng, 0.0), qa.arithmetic(rng))

    said_otherwise = []
    for ex in draws(True):
        args = json.loads(ex.call)["arguments"] if ex.call else {}
        text = ex.text
        heard = next((m for w, m in MINUTES_SAID.items() if w in text), None)  # longest first
        if heard is not None:
            said_otherwise.append(text)
            assert args["minutes"] == heard, text
        for words, amount in (("a hundred ", 100), ("a thousand ", 1000)):
            if words in text:
                said_otherwise.append(text)
                assert args["amount"] == amount, text
        if "people" in args:
            h, m = map(int, args["time"].split(":"))
            said_time = [w for w in tools._times_said(h, m) if w in text]
            said_party = [w for w in tools._people_said(args["people"]) if w in text]
            said_otherwise += said_time + said_party
            for n in range(5, 10):  # evening hours, said without "pm" (the half hours first: they hold the others)
                w = number_words(n)
                for said_as, minute in ((f"half past {w}", 30), (f"{w} thirty in the evening", 30),
                                        (f"{w} o'clock", 0), (f"{w} in the evening", 0), (f"{w} tonight", 0)):
                    if said_as in text:
                        assert (h, m) == (n + 12, minute), text
                        break
            for n in range(1, 9):
                if f"party of {number_words(n)} " in text or f" {number_words(n)} of us" in text:
                    assert args["people"] == n, text
        if ex.intent == "arithmetic":
            for op, words in qa.OP_WORDS.items():
                if any(f" {w} " in text for w in words if w != "and") or " added to " in text:
                    said_otherwise.append(text)
    assert len(said_otherwise) > 500
    for ex in draws(False):
        assert not any(w in ex.text for ws in tools.DURATIONS.values() for w in ws)
        assert "half past" not in ex.text and "of us" not in ex.text and " take away " not in ex.text


def test_a_room_bank_made_elsewhere_needs_no_room_simulator(tmp_path, monkeypatch) -> None:
    """A GPU machine brings the bank ($TICKTOCK_ROOMS) but not pyroomacoustics: the data check takes the bank; with
    no bank it asks for the simulator."""
    import sys
    import types

    import numpy as np

    from ticktock.scenarios import rooms
    from ticktock.train.data import TrainingData, check_data

    monkeypatch.setitem(sys.modules, "pyworld", types.ModuleType("pyworld"))
    monkeypatch.setitem(sys.modules, "pyroomacoustics", None)  # import fails
    bank = tmp_path / "rooms.npz"
    np.savez_compressed(bank, rt60=np.array([0.3]), h0=np.array([1.0, 0.5], dtype=np.float16))
    monkeypatch.setenv("TICKTOCK_ROOMS", str(bank))
    rooms.room_bank.cache_clear()
    try:
        assert check_data(TrainingData("aug", augment=True)).endswith("augmentation chain on")
        monkeypatch.setenv("TICKTOCK_ROOMS", str(tmp_path / "none.npz"))
        with pytest.raises(ValueError, match="needs pyroomacoustics"):
            check_data(TrainingData("aug", augment=True))
    finally:
        rooms.room_bank.cache_clear()
