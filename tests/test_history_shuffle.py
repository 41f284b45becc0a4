"""History shuffle relays a memory window's evicted exchanges without changing what a recall question asks."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ticktock.protocol import Decision
from ticktock.train.examples import UnitSpec
from ticktock.train.side_channel.history_shuffle import answer_words, exchanges, shuffled_history
from ticktock.train.side_channel.memory_examples import build_memory_example

L, S = Decision.LISTEN, Decision.SPEAK


def _exchange(said: str, reply: str) -> tuple[list[UnitSpec], list[str]]:
    """A user's words in one unit, the reply in the next, then a quiet unit."""
    return [UnitSpec(L), UnitSpec(S, reply, turn_end=True), UnitSpec(L)], [said, "", ""]


def _session() -> tuple[list[UnitSpec], list[str], dict[str, list[int]]]:
    """Exchanges: small talk, an older list, small talk, the newer list, a meeting, small talk x3, the question
    (whose exchange runs into the retained window) and its answer. Returns units, words and each exchange's units."""
    parts = [("hello there", "hi."), ("my list is apples and tea", "noted 2 items."), ("how is the weather", "sunny."),
             ("my list is salt and milk", "noted 2 items."), ("i meet anna on monday", "noted."),
             ("where is chile", "in south america."), ("tell me a joke", "no."), ("what is a river", "water."),
             ("what was the second item", "the second item was milk.")]
    units, words, spans = [UnitSpec(L)], [""], {}
    for said, reply in parts:
        u, w = _exchange(said, reply)
        spans[said] = list(range(len(units), len(units) + len(u)))
        units += u
        words += w
    units[-2] = UnitSpec(S, "the second item was milk.", turn_end=True, recall=True)
    return units, words, spans


def test_exchanges_split_the_evicted_stretch_in_order():
    units, words, spans = _session()
    groups = exchanges(units, words, 26)
    assert [k for g in groups for k in g] == list(range(26))
    assert groups[0] == [0] and groups[1] == spans["hello there"]


def test_answer_words_take_numbers_as_spoken_too():
    units = [UnitSpec(S, "the door code is 4 0 7.", recall=True), UnitSpec(S, "the second item was milk.", recall=True),
             UnitSpec(S, "there are 9 apples on the tree.")]
    assert answer_words(units) == {"4", "four", "0", "zero", "7", "seven", "milk"}
    room = [UnitSpec(S, "the meeting is in room 40.", recall=True), UnitSpec(S, "your meeting is at 11.", recall=True)]
    assert answer_words(room) == {"4", "four", "0", "zero", "forty", "1", "one", "eleven"}


@pytest.mark.parametrize("seed", range(20))
def test_the_lists_keep_their_order_and_the_answer_stays(seed):
    units, words, spans = _session()
    r0 = spans["what was the second item"][0] + 1  # the question's exchange runs into the retained window
    order = shuffled_history(units, words, r0, random.Random(seed), drop=0.5)
    assert len(set(order)) == len(order) and set(order) <= set(range(r0))
    assert order[0] == 0 and order[-1] == r0 - 1  # the leading quiet unit and the exchange at the window stay put
    place = {k: i for i, k in enumerate(order)}
    newer = spans["my list is salt and milk"]
    assert all(k in place for k in newer)  # it holds the answer: never dropped
    older = spans["my list is apples and tea"]
    if older[0] in place:  # a fact exchange: dropped or kept before the newer list, never after it
        assert place[older[0]] < place[newer[0]]
    for span in spans.values():  # exchanges move whole, or go whole
        if span[-1] < r0:
            kept = [place[k] for k in span if k in place]
            assert kept == [] or kept == list(range(kept[0], kept[0] + len(span)))


def test_small_talk_moves_and_is_sometimes_dropped():
    units, words, spans = _session()
    r0 = spans["what was the second item"][0] + 1
    talk = spans["tell me a joke"][0]
    places, dropped = set(), 0
    for seed in range(60):
        order = shuffled_history(units, words, r0, random.Random(seed))
        if talk in order:
            places.add(order.index(talk))
        else:
            dropped += 1
    assert len(places) > 4 and 0 < dropped < 60


def test_a_shuffled_memory_example_keeps_its_window_and_answer(protocol):
    p = protocol
    units, words, spans = _session()
    audio = np.random.default_rng(0).standard_normal(16000 * len(units)).astype(np.float32) * 0.1
    end = len(units) - 1  # the unit after the answer
    plain = build_memory_example(p, "hello", units, words, audio, random.Random(1), "after_content", max_gap=0,
                                 end=end)
    moved = [build_memory_example(p, "hello", units, words, audio, random.Random(s), "after_content", max_gap=0,
                                  end=end, shuffle=shuffled_history) for s in range(8)]
    for ex in moved:
        assert np.all(np.diff(ex.positions) > 0)  # positions never repeat or go back
        n = int(np.sum(ex.audio_slot >= 0))
        assert n == int(np.sum(plain.audio_slot >= 0))  # the retained window is whole
        assert p.decode(ex.memory_labels[ex.recall].tolist()) == p.decode(plain.memory_labels[plain.recall].tolist())
    assert len({tuple(ex.ids) for ex in moved}) > 3  # the evicted text is laid out differently
