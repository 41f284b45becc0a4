"""Training windows: a reply whose question lies before the window is not a target (it would teach guessing)."""

import random

import numpy as np

from ticktock.protocol import Decision
from ticktock.scenarios.script import UnitTarget, Utterance
from ticktock.train.examples import IGNORE, UnitSpec, build_example, heard_from_units


def test_a_reply_depends_on_every_part_of_its_turn_and_recall_on_the_whole_session():
    utts = [Utterance("user", "what is", 1.2, 1.8, role="part"), Utterance("user", "the time", 3.1, 3.6),
            Utterance("user", "mm", 6.2, 6.4, role="backchannel"), Utterance("user", "first item", 9.0, 9.5)]
    units = [UnitTarget(i) for i in range(12)]
    for i in (4, 5, 6, 7):
        units[i].decision = "speak"
    units[8].decision = "tool"  # a tool call right after the reply: no new user speech, same turn
    units[10] = UnitTarget(10, "speak", "two", tags=["recall"])
    heard = heard_from_units(units, utts)
    assert heard[:4] == [-1] * 4 and heard[9] == -1 and heard[11] == -1
    assert heard[4:9] == [1] * 5  # from the first part of the paused request, through the backchannel
    assert heard[10] == 0


def test_windows_after_the_question_keep_the_decision_but_not_the_content(protocol):
    units = [UnitSpec(Decision.LISTEN), UnitSpec(Decision.LISTEN),
             UnitSpec(Decision.SPEAK, "at noon", heard_from=0), UnitSpec(Decision.SPEAK, "today", True, heard_from=0)]
    audio = np.zeros(4 * 16000, dtype=np.float32)
    speak = protocol.id("speak")
    seen = set()
    for seed in range(60):
        ex = build_example(protocol, "sys", units, audio, random.Random(seed), max_len=400)
        u0 = len(units) - ex.n_units
        targets = [int(t) for t in ex.labels if t != IGNORE]
        n_decisions = targets.count(speak)
        content = [t for t in targets if t not in (speak, protocol.id("listen"))]
        assert n_decisions == min(2, ex.n_units)
        assert bool(content) == (u0 == 0), (u0, targets)
        seen.add(u0 == 0)
    assert seen == {True, False}


def test_family_weights_steer_the_training_stream():
    import random
    from collections import Counter

    import pytest

    from ticktock.scenarios.suites import SUITES
    from ticktock.train.base import parse_family_weights, train_session_index

    families = SUITES["train"].families
    weights = parse_family_weights("tool_call=3, backchannel=0")
    rng = random.Random(0)
    counts = Counter(families[train_session_index(rng, weights) % len(families)] for _ in range(4000))
    assert counts["backchannel"] == 0 and counts["tool_pair"] > 0  # two tools at once: trained on, weight 1
    assert 2.3 < counts["tool_call"] / counts["short_qa"] < 3.8
    assert parse_family_weights("") is None
    for bad in ("nope=2", "tool_call=x", "tool_call=-1", "tool_call"):
        with pytest.raises(ValueError):
            parse_family_weights(bad)


def test_recent_index_spreads_over_a_small_buffer():
    """Early in training the buffer is far smaller than the preferred age: draws must spread over it, not pile up
    on its oldest example; in a large buffer recent examples are preferred."""
    from ticktock.train.trainer import recent_index

    rng = random.Random(0)
    small = [recent_index(rng, 16) for _ in range(1600)]
    assert set(small) == set(range(16)) and max(small.count(i) for i in range(16)) < 200
    big = [recent_index(rng, 40000) for _ in range(4000)]
    assert sum(i >= 40000 - 8000 for i in big) > 0.8 * len(big)


def test_reply_weights_over_sample_sessions_by_what_is_said():
    """Sessions whose replies contain a weighted word are drawn about W times as often; no weights leave the
    draws exactly the unweighted ones (same rng consumption, same sessions)."""
    import random

    import pytest

    from ticktock.scenarios.suites import SUITES, script_at
    from ticktock.train.base import draw_training_script, parse_reply_weights, train_session_index

    def says(script, word: str) -> bool:
        return f" {word} " in f" {' '.join(u.content for u in script.units).lower()} "

    a, b = random.Random(3), random.Random(3)
    plain = [draw_training_script(a).id for _ in range(30)]
    assert plain == [script_at("train", train_session_index(b), seed=0).id for _ in range(30)]

    families = SUITES["train"].families
    only_qa = {f: (1.0 if f == "short_qa" else 0.0) for f in families}
    rng = random.Random(0)
    base = sum(says(draw_training_script(rng, only_qa), "minus") for _ in range(600)) / 600
    weights = parse_reply_weights("minus=8")
    boosted = sum(says(draw_training_script(rng, only_qa, weights), "minus") for _ in range(600)) / 600
    assert 0.02 < base < 0.15
    # share p -> 8p / (8p + 1 - p): the boosted share is far above the plain one
    expect = 8 * base / (8 * base + 1 - base)
    assert abs(boosted - expect) < 0.12 and boosted > 3 * base
    with pytest.raises(ValueError, match="accepted no session"):  # a weight no session can meet: a clear error
        draw_training_script(random.Random(0), None, {"qqqzz": 1e12}, max_tries=20)
    assert parse_reply_weights("") is None
    for bad in ("Minus=2", "minus=x", "minus=-1", "minus", "two words=2"):
        with pytest.raises(ValueError):
            parse_reply_weights(bad)


def test_max_offset_reaches_the_positions_of_long_sessions(shipped_protocol):
    """`train base`'s `max_offset` N draws the offset after the prefix from [0, N): with N = 1 the window
    follows the prefix directly; with a large N windows sit thousands of positions further on."""
    from ticktock.train.base import ExampleFactory

    near = ExampleFactory(shipped_protocol, transcribe_share=0.0, max_len=256, max_offset=1)
    far = ExampleFactory(shipped_protocol, transcribe_share=0.0, max_len=256, max_offset=20000)
    for seed in range(3):
        assert list(near(seed).positions) == list(range(len(near(seed).positions)))
    assert max(int(far(seed).positions[-1]) for seed in range(6)) > 3000 + 256
