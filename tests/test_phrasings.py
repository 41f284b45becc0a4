"""The `phrasings` suite: requests written by hand, in other words than the generator's, with exact targets."""

from __future__ import annotations

import json
import random

from ticktock.scenarios import check_script, make_scripts, parse_calls, run_tool
from ticktock.scenarios.intents.qa import short_question
from ticktock.scenarios.intents.tools import ONE_PER_TOOL, confirm
from ticktock.scenarios.phrasings import PHRASINGS
from ticktock.scenarios.suites import SUITES
from ticktock.scenarios.world import TOOLS


def test_the_suite_covers_qa_and_every_tool_in_held_out_voices():
    scripts = make_scripts("phrasings")
    assert len(scripts) == len(PHRASINGS) >= 40 and SUITES["phrasings"].split == "heldout"
    assert {s.family for s in scripts} == {"short_qa", "tool_call"}
    called = {parse_calls(s.tool_call)[0][0] for s in scripts if s.tool_call}
    assert called == set(TOOLS)
    assert [s.id for s in scripts[:2]] == ["phrasings-00000-short_qa", "phrasings-00001-short_qa"]
    for s in scripts:
        check_script(s)
        spoken = " ".join(u.content for u in s.units if u.decision == "speak")
        assert spoken == s.answer  # what eval scores the reply against
        if s.tool_call:
            (name, args), = parse_calls(s.tool_call)
            assert s.answer == confirm(name, args, run_tool(s.tool_call))
            assert [u.content for u in s.units if u.decision == "tool"] == [s.tool_call]


def test_no_request_is_one_the_generator_writes():
    rng = random.Random(0)
    generated = {short_question(rng).text for _ in range(20000)}
    generated |= {tool(rng, 0.0).text for tool in ONE_PER_TOOL for _ in range(4000)}
    assert not {ex.text for _, ex in PHRASINGS} & generated


def test_tool_replies_are_the_trained_ones():
    """`confirm` is where the generator's tool replies come from, so the suite's expected replies are the same."""
    rng = random.Random(1)
    for tool in ONE_PER_TOOL * 20:
        ex = tool(rng, 0.0)
        (name, args), = parse_calls(ex.call)
        assert ex.reply == confirm(name, args, ex.result)
        assert json.loads(ex.call)["name"] == name
