"""Connected speech: whole utterances from libespeak-ng with every word's time from the synthesizer's events."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ticktock.audio.io import SAMPLE_RATE
from ticktock.scenarios import EspeakRenderer, espeak_available
from ticktock.scenarios.augment import CLEAN
from ticktock.scenarios.espeak import EspeakError, voiced_segments
from ticktock.scenarios.espeak_connected import Mark, word_samples
from ticktock.scenarios.render import render_session
from ticktock.scenarios.script import check_script
from ticktock.scenarios.suites import SUITES, render_script, script_at
from ticktock.scenarios.text import speakable, spoken_words
from ticktock.scenarios.voices import Voice


def _library() -> bool:
    try:
        from ticktock.scenarios.espeak_connected import ConnectedEspeak
        ConnectedEspeak()
    except EspeakError:
        return False
    return espeak_available()


needs_library = pytest.mark.skipif(not _library(), reason="libespeak-ng not installed")
VOICE = Voice("en-us+m3", 170, 50)


def test_speakable_keeps_closing_punctuation_and_spans_each_spoken_word() -> None:
    text, spans = speakable("Hmm, what's the weather in Paris?")
    assert text == "hmm, what's the weather in paris?"
    assert [text[a - 1:b - 1] for a, b in spans] == spoken_words("Hmm, what's the weather in Paris?")


def _w(sample: int, pos: int) -> Mark:
    return Mark(sample, pos, None)


def _p(sample: int, pos: int, ph: str) -> Mark:
    return Mark(sample, pos, ph)


def test_a_merged_group_is_shared_out_by_phoneme_counts() -> None:
    # "of the week": one word event for "of the" (phonemes 0 v D @), then "week", a pause, a closing event
    spans = [(1, 3), (4, 7), (8, 12)]
    marks = [_w(0, 1), _p(0, 1, "0"), _p(10, 1, "v"), _p(20, 1, "D"), _p(30, 1, "@"),
             _w(40, 8), _p(40, 8, "w"), _p(50, 8, "i:"), _p(60, 8, "k"), _p(75, 13, "_:"), _w(90, 0)]
    counts = {0: 2, 1: 2, 2: 3}
    assert word_samples(marks, spans, 100, counts.__getitem__) == [(0, 20), (20, 40), (40, 75)]
    # counts that do not add up to the group's phonemes: no times, the caller renders word by word
    assert word_samples(marks, spans, 100, {0: 2, 1: 3, 2: 3}.__getitem__) is None


def test_a_position_that_drifted_past_punctuation_still_names_the_next_word() -> None:
    spans = [(1, 7), (9, 13)]  # "flight. from": the event of "from" says 8 (the space)
    marks = [_w(0, 1), _p(0, 1, "f"), _p(30, 1, "t"), _w(50, 8), _p(50, 8, "f"), _p(70, 8, "m")]
    assert word_samples(marks, spans, 90, lambda i: 1) == [(0, 50), (50, 90)]
    # without the event of "from", both words share the first event's two phonemes: only if the counts say so
    assert word_samples(marks[:3], spans, 90, lambda i: 1) == [(0, 30), (30, 90)]
    assert word_samples(marks[:3], spans, 90, lambda i: 2) is None


@needs_library
def test_word_times_match_the_sound_of_a_connected_utterance() -> None:
    """Each pause the voice makes lies between two words' times, and the words fill the clip."""
    from ticktock.scenarios.espeak_connected import ConnectedEspeak

    text = "hello, my friend, what is seven times eight?"
    clip, times = ConnectedEspeak().utterance(text, VOICE)
    assert len(times) == len(spoken_words(text))
    assert times[0][0] == 0 and abs(times[-1][1] * SAMPLE_RATE - len(clip)) <= 1
    assert all(a < b <= c for (a, b), (c, _) in zip(times, times[1:]))
    segs = [(a / SAMPLE_RATE, b / SAMPLE_RATE) for a, b in voiced_segments(clip, SAMPLE_RATE)]
    assert len(segs) >= 2  # stretches of sound split at a comma's pause
    for (_, end), (start, _) in zip(segs, segs[1:]):
        gap_words = [(b, c) for (_, b), (c, _) in zip(times, times[1:]) if c - b > 0.05]
        assert any(abs(b - end) < 0.03 and abs(c - start) < 0.03 for b, c in gap_words), (end, start, gap_words)


@needs_library
def test_a_connected_session_is_laid_out_from_the_utterances_word_times() -> None:
    script = script_at("heldout", 0)
    r = render_session(script, VOICE, random.Random(0), EspeakRenderer(), CLEAN, connected=True)
    check_script(r.script, r.words)
    user = [w for w in r.words if w["speaker"] == "user"]
    first = r.script.utterances[0]
    said = [w for w in user if first.start_s <= w["start"] < first.end_s]
    assert [w["word"] for w in said] == spoken_words(first.text)
    assert any(b["start"] == a["end"] for a, b in zip(said, said[1:]))  # words run into each other
    for w in user:  # every word is heard where its times say
        a, b = int(w["start"] * SAMPLE_RATE), int(w["end"] * SAMPLE_RATE)
        assert np.sqrt(np.mean(r.audio[a:b] ** 2)) > 1e-3, w
    plain = render_session(script, VOICE, random.Random(0), EspeakRenderer(), CLEAN)
    assert r.script.units != plain.script.units or r.words != plain.words



def test_a_part_a_pause_follows_is_said_with_a_continuing_tone() -> None:
    """A request part before a mid-sentence pause goes to the engine with a comma (espeak-ng then keeps the phrase
    open instead of closing it as a sentence ends); its words and times are those of the part."""
    script = next(s for s in map(lambda i: script_at("heldout", i), range(60)) if s.family == "pause_handling")
    parts = [u.text for u in script.utterances if u.role == "part"]
    asked: list[str] = []

    class Recording(EspeakRenderer):
        def utterances(self, texts, voice):
            asked.extend(texts)
            return super().utterances(texts, voice)

    r = render_session(script, VOICE, random.Random(0), Recording(), CLEAN, connected=True)
    assert parts and all(p + "," in asked and p not in asked for p in parts)
    assert all(t in asked for t in (u.text for u in script.utterances if u.role != "part" and u.speaker == "user"))
    check_script(r.script, r.words)

def test_heldout_connected_is_heldouts_sessions_said_in_one_go() -> None:
    s = SUITES["heldout-connected"]
    assert s.connected and s.n == SUITES["heldout"].n and s.split == "heldout"
    assert not any(SUITES[k].connected for k in ("quick", "heldout", "full", "long", "phrasings"))
    for i in (0, 7, 150):
        a, b = script_at("heldout", i), script_at("heldout-connected", i)
        assert (a.plan, a.system, a.units) == (b.plan, b.system, b.units)


@needs_library
def test_heldout_connected_keeps_heldouts_voices_and_noise() -> None:
    a = render_script(script_at("heldout", 3), "heldout", EspeakRenderer())
    b = render_script(script_at("heldout-connected", 3), "heldout-connected", EspeakRenderer())
    assert a.voice == b.voice


@needs_library
def test_training_data_says_its_share_of_sessions_in_one_go() -> None:
    """`connected_share` of the sessions run their words into each other; the shipped data never does."""
    from ticktock.scenarios.engines import Engines
    from ticktock.train.data import DATA_PRESETS, TrainingData, render_training_session

    def abutting(data: TrainingData, seed: int) -> bool:
        r = render_training_session(data, random.Random(seed), seed, Engines())
        user = [w for w in r.words if w["speaker"] == "user"]
        return any(b["start"] == a["end"] for a, b in zip(user, user[1:]))

    assert DATA_PRESETS["multi-engine"].connected_share == 0.5 and DATA_PRESETS["espeak"].connected_share == 0
    assert all(abutting(TrainingData("one-go", connected_share=1.0), s) for s in range(4))
    assert not any(abutting(DATA_PRESETS["espeak"], s) for s in range(4))


@needs_library
def test_the_training_line_says_what_the_data_holds() -> None:
    from ticktock.train.data import DATA_PRESETS, TrainingData, check_data

    assert check_data(DATA_PRESETS["espeak"]) == "data espeak: espeak-ng's training voices"
    line = check_data(TrainingData("one-go", connected_share=0.5))
    assert line == "data one-go: espeak-ng's training voices; 50% of sessions said in one go"


def _festival_training_voice() -> str | None:
    from ticktock.train.data import festival_training_voices

    return next(iter(festival_training_voices()), None)


@pytest.mark.skipif(_festival_training_voice() is None, reason="no festival training voice installed")
def test_festival_says_utterances_in_one_go_with_its_segments_times() -> None:
    from ticktock.scenarios.festival import FestivalRenderer

    texts = ["hmm, what's the weather in paris on friday?", "set a timer for twenty-five minutes.", "i'm at 10 am"]
    said = FestivalRenderer().utterances(texts, Voice(_festival_training_voice(), 160))
    assert set(said) == set(texts)
    for text, (clip, times) in said.items():
        assert len(times) == len(spoken_words(text)) and times[0][0] == 0
        assert all(a < b <= c for (a, b), (c, _) in zip(times, times[1:]))
        assert abs(times[-1][1] * SAMPLE_RATE - len(clip)) <= 2
    clip, times = said[texts[0]]  # the comma's pause lies between "hmm" and "what's"
    assert times[1][0] - times[0][1] > 0.05


@needs_library
def test_two_instances_in_one_process_each_get_their_own_audio() -> None:
    """The library has one callback per process: each synthesis points it back at its own instance. (The
    library's state carries over between utterances, so the same text comes out within a few milliseconds.)"""
    from ticktock.scenarios.espeak_connected import ConnectedEspeak

    a, b = ConnectedEspeak(), ConnectedEspeak()
    first = a.utterance("what is the capital of france?", VOICE)
    other = b.utterance("yes.", VOICE)
    again = a.utterance("what is the capital of france?", VOICE)
    assert first is not None and other is not None and again is not None
    assert abs(len(first[0]) - len(again[0])) < 0.01 * SAMPLE_RATE
    assert np.allclose(first[1], again[1], atol=0.015)
    assert abs(len(other[0]) - len(first[0])) > 0.1 * SAMPLE_RATE  # each got its own text
