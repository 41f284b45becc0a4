"""Fact swap renames the facts of a memory window's evicted text consistently, and nothing that is heard."""

from __future__ import annotations

import random

import pytest

from ticktock.protocol import Decision
from ticktock.train.examples import UnitSpec
from ticktock.train.side_channel.fact_swap import swap_facts

L, S = Decision.LISTEN, Decision.SPEAK


def _session(memo: str, question: str, answer: str) -> tuple[list[UnitSpec], list[str]]:
    """Unit 0 hears the memo, 1 acknowledges it, 2-4 pass, 5 hears the question, 6 answers (a recall unit)."""
    units = [UnitSpec(L), UnitSpec(S, "okay, noted.", turn_end=True), UnitSpec(L), UnitSpec(L), UnitSpec(L),
             UnitSpec(L), UnitSpec(S, answer, turn_end=True, recall=True)]
    return units, [memo, "", "", "", "", question, ""]


@pytest.mark.parametrize("seed", range(5))
def test_the_answer_follows_the_renamed_list(seed):
    items = ["apples", "tea", "salt"]
    units, words = _session(f"i need to buy {items[0]} {items[1]} and {items[2]}", "what was the second item",
                            f"the second item was {items[1]}.")
    new_units, new_words = swap_facts(units, words, 2, 7, random.Random(seed))
    memo = new_words[0].split()
    assert memo[:3] == ["i", "need", "to"] and len(memo) == len(words[0].split())
    assert new_units[6].content == f"the second item was {memo[5]}."
    assert new_words[1:] == words[1:]  # the retained transcripts are what the audio says
    assert [u.recall for u in new_units] == [u.recall for u in units]


def test_renaming_changes_the_facts():
    units, words = _session("i need to buy apples tea and salt", "what was the second item", "the second item was tea.")
    answers = {swap_facts(units, words, 2, 7, random.Random(s))[0][6].content for s in range(20)}
    assert len(answers) > 5


def test_words_heard_in_the_window_keep_their_meaning():
    units, words = _session("i meet victor on friday at seven", "at what time do i meet victor on friday",
                            "your meeting is at 7.")
    for s in range(10):
        new_units, new_words = swap_facts(units, words, 2, 7, random.Random(s))
        assert "victor" in new_words[0] and "friday" in new_words[0]  # the question names them: they stay


def test_a_codes_digits_are_renamed_in_words_and_numerals_alike():
    units, words = _session("my door code is two six zero seven", "what is my door code", "the door code is 2 6 0 7.")
    spoken = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
              "nine": 9}
    changed = 0
    for s in range(10):
        new_units, new_words = swap_facts(units, words, 2, 7, random.Random(s))
        code = " ".join(str(spoken[w]) for w in new_words[0].split()[-4:])
        assert new_units[6].content == f"the door code is {code}."
        changed += code != "2 6 0 7"
    assert changed >= 8


def test_counts_and_rooms_keep_their_numbers():
    for answer in ("there are 4 items on your list.", "the meeting is in room 12."):
        units, words = _session("note these items for me one two three and four", "how many items", answer)
        for s in range(5):
            new_units, new_words = swap_facts(units, words, 2, 7, random.Random(s))
            assert new_units[6].content == answer and new_words[0] == words[0]
