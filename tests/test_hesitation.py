"""Hesitations (`train.hesitation`): a reply started one unit late after an unlearnt `listen`, the session's
audio, words and turn starts moved on with it."""

import random
from dataclasses import replace

import numpy as np
import pytest

from ticktock.protocol import Decision
from ticktock.train.base import ExampleFactory
from ticktock.train.data import DATA_PRESETS, TrainingData
from ticktock.train.examples import IGNORE, UnitSpec, build_example
from ticktock.train.hesitation import QUIET_S, hesitate, maybe_hesitate, reply_onsets

CHUNK = 1600  # a small chunk keeps the arrays short; the times are in units of chunk_s = 1.0
L, S, T = Decision.LISTEN, Decision.SPEAK, Decision.TOOL


def _session():
    units = [UnitSpec(L), UnitSpec(L), UnitSpec(S, "the capital", heard_from=1),
             UnitSpec(S, "is paris.", True, heard_from=1), UnitSpec(L), UnitSpec(L),
             UnitSpec(T, '{"name": "set_timer", "arguments": {"minutes": 7}}', heard_from=4),
             UnitSpec(S, "okay.", True, "set", heard_from=4), UnitSpec(L)]
    audio = np.arange(len(units) * CHUNK, dtype=np.float32)
    words = [{"word": "capital", "start": 1.2, "end": 1.6}, {"word": "timer", "start": 4.1, "end": 4.5}]
    return units, audio, words


def test_a_hesitated_reply_starts_a_unit_late_over_silence():
    units, audio, words = _session()
    assert reply_onsets(units) == [2, 6]
    late, late_audio, late_words = hesitate(units, audio, words, 2, CHUNK)
    assert len(late) == len(units) + 1 and late[2] == UnitSpec(L, hesitated=True)
    assert late[3:5] == units[2:4]  # the reply, whole, one unit on; its turn started before the hesitation
    assert [u.heard_from for u in late[7:9]] == [5, 5]  # a later turn's start moves on with its audio
    assert len(late_audio) == len(audio) + CHUNK
    assert (late_audio[:3 * CHUNK] == audio[:3 * CHUNK]).all()
    assert (late_audio[4 * CHUNK:] == audio[3 * CHUNK:]).all()
    inserted, quiet = late_audio[3 * CHUNK:4 * CHUNK], audio[3 * CHUNK - int(QUIET_S * CHUNK):3 * CHUNK]
    assert set(inserted.tolist()) <= set(quiet.tolist())  # only the onset unit's quiet end, repeated
    assert late_words[0] == words[0] and (late_words[1]["start"], late_words[1]["end"]) == (5.1, 5.5)
    with pytest.raises(ValueError, match="does not start a reply"):
        hesitate(units, audio, words, 3, CHUNK)


def test_maybe_hesitate_follows_its_share():
    units, audio, words = _session()
    assert maybe_hesitate(units, audio, words, 0.0, random.Random(0), CHUNK)[0] is units
    late = maybe_hesitate(units, audio, words, 1.0, random.Random(0), CHUNK)[0]
    assert sum(u.hesitated for u in late) == 1 and len(late) == len(units) + 1
    alone = [UnitSpec(L), UnitSpec(L)]  # nothing to answer: nothing changes
    assert maybe_hesitate(alone, audio[:2 * CHUNK], [], 1.0, random.Random(0), CHUNK)[0] is alone


def test_the_hesitation_is_context_not_a_label(shipped_protocol):
    p = shipped_protocol
    units, _, _ = _session()
    audio = np.zeros((len(units) + 1) * p.chunk_samples, dtype=np.float32)
    late = hesitate(units, np.zeros(len(units) * p.chunk_samples, np.float32), [], 2, p.chunk_samples)[0]
    plain = late[:2] + [UnitSpec(L)] + late[3:]  # the same layout with the listen learnt
    seed = next(s for s in range(100)  # a window of the whole session (windows start anywhere)
                if build_example(p, "be brief.", late, audio, random.Random(s), max_len=2048).first_unit == 0)
    a = build_example(p, "be brief.", late, audio, random.Random(seed), max_len=2048)
    b = build_example(p, "be brief.", plain, audio, random.Random(seed), max_len=2048)
    assert a.n_units == len(late)
    assert (a.ids == b.ids).all()  # the model sees its own listen either way
    learnt = lambda ex: int((ex.labels != IGNORE).sum())  # noqa: E731
    assert learnt(b) - learnt(a) == len(p.output_ids(L, "", False))
    assert p.id("speak") in a.labels.tolist()  # the late reply is learnt


def test_hesitate_share_zero_leaves_examples_as_they_were(shipped_protocol):
    p = shipped_protocol
    plain = ExampleFactory(p, transcribe_share=0.0, max_len=256)
    zero = ExampleFactory(p, transcribe_share=0.0, max_len=256, data=TrainingData("espeak", hesitate_share=0.0))
    a, b = plain(5), zero(5)
    assert (a.ids == b.ids).all() and (a.labels == b.labels).all()
    every = ExampleFactory(p, transcribe_share=0.0, max_len=256, data=TrainingData("late", hesitate_share=1.0))
    pairs = [(plain(s), every(s)) for s in (5, 6)]
    changed = [len(x.ids) != len(y.ids) or (x.labels != y.labels).any() for x, y in pairs]
    assert any(changed)  # the same rendered sessions, laid out with a reply a unit late


def test_the_hesitate_preset_is_read_forms_with_late_replies():
    late = DATA_PRESETS["multi-engine-hesitate"]
    assert late.hesitate_share > 0
    assert replace(late, name="multi-engine-read-forms", hesitate_share=0.0) == DATA_PRESETS["multi-engine-read-forms"]
