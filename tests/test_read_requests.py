"""Requests read as text (`train.read_requests`): windows of several requests, their words in a transcript
segment over silence, labelled on the model's outputs only."""

import random
from dataclasses import replace

import pytest

from ticktock.protocol import Decision
from ticktock.scenarios.suites import SUITES
from ticktock.train.base import ExampleFactory, draw_training_script
from ticktock.train.data import DATA_PRESETS, TrainingData
from ticktock.train.examples import CONTEXT_SAMPLES, IGNORE
from ticktock.train.read_requests import build_read_example, mishear, read_requests
from ticktock.train.trainer import collate


def _scripts(n: int, seed: int = 0) -> list:
    rng = random.Random(seed)
    weights = {f: float(f in ("short_qa", "tool_call")) for f in SUITES["train"].families}
    return [draw_training_script(rng, weights) for _ in range(n)]


def _segments(ids: list[int], start: int, end: int) -> list[list[int]]:
    out, i = [], 0
    while start in ids[i:]:
        i = ids.index(start, i)
        j = ids.index(end, i)
        out.append(ids[i + 1:j])
        i = j
    return out


def test_each_reply_reads_the_words_asked_since_the_last_one():
    pairs = 0
    for script in _scripts(40):
        asks = [u for u in script.utterances if u.speaker == "user" and u.role in ("request", "part")]
        said = [u for u in script.units if u.decision != "listen"]
        requests = read_requests(script)
        assert 1 <= len(requests) <= len(asks)
        assert " ".join(w for w, _ in requests) == " ".join(a.text for a in asks)  # every word read, in order
        for words, reply in requests:
            assert reply[-1].turn_end and not any(u.turn_end for u in reply[:-1])
            if reply[0].decision == Decision.TOOL:  # the call's result comes back in the reply
                assert any(u.tool_result for u in reply)
        assert sum(len(r) for _, r in requests) == len(said)
        pairs += len(requests) > 1
    assert pairs  # some scripts ask twice, and each answer reads its own question


def test_a_window_reads_several_requests_and_learns_only_the_outputs(shipped_protocol):
    p = shipped_protocol
    requests = [r for s in _scripts(8, seed=1) for r in read_requests(s)]
    ex = build_read_example(p, "you are a helpful voice assistant.", requests, random.Random(0), max_len=512)
    ids = list(ex.ids)
    read = _segments(ids, p.id("asr_start"), p.id("asr_end"))
    assert 2 <= len(read) < 8 and len(ids) <= 512  # several, as many as fit
    assert read == [p.encode(w) for w, _ in requests[:len(read)]]  # in order, word for word
    # every label is the next token, and the next tokens learnt are the outputs: decisions, content, terminators
    learnt = [i for i, lab in enumerate(ex.labels) if lab != IGNORE]
    assert all(ex.labels[i] == ids[i + 1] for i in learnt)
    decisions = {p.id(d.name.lower()) for d in Decision}
    assert sum(ids[i + 1] in decisions for i in learnt) == sum(t in decisions for t in ids)
    assert not {ids[i + 1] for i in learnt} & {p.id("asr_start"), p.id("asr_end"), p.id("unit")}
    # each request: a listening unit, then the read unit's reply; audio slots for every unit, silence under them
    e = p.audio_per_chunk
    assert sorted(s for s in ex.audio_slot if s >= 0) == list(range(ex.n_units * e))
    assert len(ex.audio) == (ex.n_units + 1) * p.chunk_samples + CONTEXT_SAMPLES
    assert 0 < abs(ex.audio.astype(float)).max() < 0.01
    assert ex.n_units == sum(2 + len(reply) - 1 for _, reply in requests[:len(read)])


def test_the_first_request_must_fit(shipped_protocol):
    requests = [r for s in _scripts(2, seed=2) for r in read_requests(s)]
    with pytest.raises(ValueError, match="does not fit"):
        build_read_example(shipped_protocol, "be brief.", requests, random.Random(0), max_len=40)


def test_read_share_makes_read_windows_and_zero_leaves_examples_as_they_were(shipped_protocol):
    p = shipped_protocol
    plain = ExampleFactory(p, transcribe_share=0.3, max_len=256)
    zero = ExampleFactory(p, transcribe_share=0.3, max_len=256, data=TrainingData("espeak", read_share=0.0))
    a, b = plain(3), zero(3)
    assert (a.ids == b.ids).all() and (a.labels == b.labels).all()
    every = ExampleFactory(p, transcribe_share=0.0, max_len=256, data=TrainingData("read", read_share=1.0))
    batch = [every(seed) for seed in range(2)]
    assert all(p.id("asr_start") in list(ex.ids) for ex in batch)
    out = collate(batch + [a], p.id("pad"), p.chunk_samples, "cpu")  # mixes with heard windows in one batch
    assert out["ids"].shape[0] == 3
    assert DATA_PRESETS["multi-engine-read"].read_share > 0
    forms = DATA_PRESETS["multi-engine-read-forms"]  # the same data, composed questions drawn form first
    assert forms.by_form and replace(forms, name="multi-engine-read", by_form=False) == DATA_PRESETS["multi-engine-read"]


def test_mishear_keeps_words_at_zero_and_changes_them_at_one():
    words = "if i travel to japan what money will i need"
    pool = ["sorry", "forty", "can"]
    assert mishear(words, 0.0, random.Random(0), pool) == words
    heard = [mishear(words, 1.0, random.Random(seed), pool) for seed in range(20)]
    assert all(h and h != words for h in heard)  # every word misheard: never the words read, never empty
    assert any(w in pool for h in heard for w in h.split())  # substitutions come from the pool
    assert mishear(words, 0.3, random.Random(5), pool) == mishear(words, 0.3, random.Random(5), pool)
    doubled = [mishear("need yen?", 1.0, random.Random(seed), pool) for seed in range(40)]
    assert "yen yen?" in doubled and not any("yen? yen?" in h for h in doubled)  # a repeat keeps one question mark
    with pytest.raises(ValueError, match="mishear rate"):
        mishear(words, 1.5, random.Random(0), pool)


def test_read_noise_mishears_the_read_words_and_leaves_the_labels(shipped_protocol):
    p = shipped_protocol
    exact = ExampleFactory(p, transcribe_share=0.0, max_len=256, data=TrainingData("read", read_share=1.0))
    noisy = ExampleFactory(p, transcribe_share=0.0, max_len=256,
                           data=TrainingData("read", read_share=1.0, read_noise=0.5))
    a, b = exact(4), noisy(4)
    start, end = p.id("asr_start"), p.id("asr_end")
    read_a, read_b = _segments(list(a.ids), start, end), _segments(list(b.ids), start, end)
    assert read_a and read_a != read_b[:len(read_a)]
    assert [t for t in a.labels if t != IGNORE][:8] == [t for t in b.labels if t != IGNORE][:8]  # same first reply
    assert DATA_PRESETS["multi-engine-read-noisy"].read_noise > 0
