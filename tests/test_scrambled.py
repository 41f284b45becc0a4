"""Scrambled listening: the user's words in a random order, the rest of the session as it was."""

import random
from dataclasses import replace

from ticktock.scenarios.engines import Engines
from ticktock.scenarios.scrambled import scrambled
from ticktock.scenarios.suites import script_at
from ticktock.train.base import ExampleFactory
from ticktock.train.examples import TRANSCRIBE_SYSTEM
from ticktock.train.data import DATA_PRESETS, TrainingData, render_training_session


def _user_says(script) -> list[str]:
    return [ev["text"] for ev in script.plan["events"] if ev["kind"] == "say" and ev["speaker"] == "user"]


def _unpunctuated(text: str) -> list[str]:
    return text.replace(",", "").replace("?", "").replace(".", "").split()


def _not_said(script) -> list[dict]:
    return [ev for ev in script.plan["events"] if ev["kind"] != "say"]


def test_scrambling_reorders_each_user_utterance_and_nothing_else():
    script = script_at("train", 5, seed=0)
    before = [dict(ev) for ev in script.plan["events"]]
    out = scrambled(script, random.Random(3))
    assert script.plan["events"] == before  # the original is left as it was
    said, was = _user_says(out), _user_says(script)
    assert len(said) == len(was) >= 2
    for new, old in zip(said, was):
        assert sorted(new.split()) == sorted(_unpunctuated(old))
    assert said != [" ".join(_unpunctuated(old)) for old in was]
    assert _not_said(out) == _not_said(script)
    assert [u.text for u in out.utterances] == said


def test_a_scrambled_session_is_heard_and_labelled_in_its_new_order():
    data = TrainingData("scrambled", scrambled_share=1.0)
    r = render_training_session(data, random.Random(11), 11, Engines(), scramble=True)
    heard = [w["word"] for w in r.words if w.get("speaker", "user") == "user"]
    spoken = " ".join(_user_says(r.script)).split()
    assert heard == spoken  # the labels follow the audio's new order, word for word


def test_no_scrambling_draws_exactly_the_examples_it_did(shipped_protocol):
    """`scrambled_share` 0 (every preset but those that ask) leaves every example as it was; 1 makes each one a
    transcription of scrambled speech."""
    plain = ExampleFactory(shipped_protocol, transcribe_share=0.3, max_len=256)
    again = ExampleFactory(shipped_protocol, transcribe_share=0.3, max_len=256,
                           data=TrainingData("espeak", scrambled_share=0.0))
    for seed in range(2):
        a, b = plain(seed), again(seed)
        assert (a.ids == b.ids).all() and (a.labels == b.labels).all()
    every = ExampleFactory(shipped_protocol, transcribe_share=0.0, max_len=256,
                           data=TrainingData("scrambled", scrambled_share=1.0))
    transcribe = shipped_protocol.encode(TRANSCRIBE_SYSTEM)
    for seed in range(2):
        ids = list(every(seed).ids)
        assert any(ids[i:i + len(transcribe)] == transcribe for i in range(len(ids)))


def test_only_the_scrambled_presets_scramble_and_are_multi_engine_otherwise():
    assert [n for n, p in DATA_PRESETS.items() if p.scrambled_share] == [
        "multi-engine-scrambled", "multi-engine-read", "multi-engine-read-forms", "multi-engine-read-noisy",
        "multi-engine-hesitate"]
    scrambling = DATA_PRESETS["multi-engine-scrambled"]
    assert 0 < scrambling.scrambled_share < 1
    assert replace(scrambling, name="multi-engine", scrambled_share=0.0) == DATA_PRESETS["multi-engine"]
