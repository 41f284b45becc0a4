"""The blind requests make valid sessions of the `phrasings` kind: every tool, exact targets, trained replies."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from blind import BLIND  # noqa: E402
from run import blind_script  # noqa: E402
from ticktock.scenarios import check_script, parse_calls, run_tool  # noqa: E402
from ticktock.scenarios.intents.tools import confirm  # noqa: E402
from ticktock.scenarios.world import TOOLS  # noqa: E402


def test_blind_requests_are_sessions_with_the_trained_replies():
    scripts = [blind_script(i, random.Random(i)) for i in range(len(BLIND))]
    assert len(scripts) >= 40 and {s.family for s in scripts} == {"short_qa", "tool_call"}
    assert {parse_calls(s.tool_call)[0][0] for s in scripts if s.tool_call} == set(TOOLS)
    for s in scripts:
        check_script(s)
        assert " ".join(u.content for u in s.units if u.decision == "speak") == s.answer
        if s.tool_call:
            (name, args), = parse_calls(s.tool_call)
            assert s.answer == confirm(name, args, run_tool(s.tool_call))
