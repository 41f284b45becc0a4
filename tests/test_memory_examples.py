"""Memory examples (the context as `a2t` eviction leaves it) and continuing from a saved adapter."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import torch

from ticktock.cache.policies.acoustic_to_text import ACOUSTIC_KINDS
from ticktock.protocol import Decision
from ticktock.train.examples import IGNORE, UnitSpec
from ticktock.train.side_channel.memory_examples import RETENTION_UNITS, build_memory_example, memory_end
from ticktock.train.side_channel.examples import NATIVE, unit_tokens

from conftest import random_model

L, S, T = Decision.LISTEN, Decision.SPEAK, Decision.TOOL
UNITS = [UnitSpec(L), UnitSpec(L), UnitSpec(S, "sure, here you go"), UnitSpec(L), UnitSpec(L),
         UnitSpec(T, 'find_flights(origin="TYO")', tool_result="flight JL123"), UnitSpec(S, "okay", turn_end=True),
         UnitSpec(L), UnitSpec(L), UnitSpec(S, "the capital of france is paris"), UnitSpec(S, "okay", turn_end=True),
         UnitSpec(L)]
WORDS = ["", "what is", "the capital of france", "", "book a flight", "", "", "okay", "one two three", "", "", "uh-huh"]


def full_layout(p, placement: str, u1: int):
    """The uncompacted session up to unit u1: (tokens, kept-by-a2t flags, native flags, unit of each token)."""
    toks, kept, native, unit = [], [], [], []
    for k, (u, w) in enumerate(zip(UNITS[:u1], WORDS[:u1])):
        tr = p.tool_result_ids(u.tool_result) if u.tool_result else []
        out, roles, _ = unit_tokens(p, u, w, placement)
        toks += [p.id("unit")] + [p.id("pad")] * p.audio_per_chunk + tr + out
        kept += [False] * (1 + p.audio_per_chunk) + [True] * len(tr) + [p.output_kind(t) not in ACOUSTIC_KINDS for t in out]
        native += [False] * (1 + p.audio_per_chunk + len(tr)) + [r == NATIVE for r in roles]
        unit += [k] * (1 + p.audio_per_chunk + len(tr) + len(out))
    return toks, kept, native, unit


@pytest.mark.parametrize("placement", ["after_decision", "after_content"])
def test_memory_example_is_the_a2t_cache(protocol, placement):
    """Old units keep exactly a2t's kinds at their original positions; the last five are whole and alone supervised."""
    p = protocol
    audio = np.random.default_rng(0).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1
    prefix = p.prefix_ids("hello")
    seen_evicted = False
    for seed in range(12):
        ex = build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(seed), placement, max_len=400,
                                  max_gap=0)
        ids, pos = ex.ids.tolist(), ex.positions.tolist()
        assert ids[: len(prefix)] == prefix and pos[: len(prefix)] == list(range(len(prefix)))
        assert all(b > a for a, b in zip(pos, pos[1:])), "logical positions must strictly increase"
        matches = []
        for u1 in range(1, len(UNITS) + 1):
            toks, kept, native, unit = full_layout(p, placement, u1)
            r0 = max(0, u1 - RETENTION_UNITS)
            idx = [i for i, k in enumerate(kept) if unit[i] >= r0 or k]
            if [toks[i] for i in idx] != ids[len(prefix):]:
                continue
            base = pos[len(prefix)] - idx[0]
            assert pos[len(prefix):] == [base + i for i in idx], "survivors keep their uncompacted positions"
            assert ex.n_units == u1 - r0 and (ex.audio_slot >= 0).sum() == ex.n_units * p.audio_per_chunk
            # supervision: the retained units' native outputs only, none on what was evicted
            want = [toks[i + 1] if i + 1 < len(toks) and native[i + 1] and unit[i + 1] >= r0 else IGNORE for i in idx]
            assert ex.memory_labels[len(prefix):].tolist() == want
            evicted = [j for j, i in enumerate(idx) if unit[i] < r0]
            assert all(ex.asr_labels[len(prefix) + j] == IGNORE and ex.open_target[len(prefix) + j] == -1 for j in evicted)
            seen_evicted |= r0 > 0
            matches.append(u1)
        assert len(matches) == 1, f"seed {seed}: the example is no single a2t cache ({matches})"
        assert (ex.labels == IGNORE).all() and (ex.teacher_labels == IGNORE).all()  # nothing to distil
    assert seen_evicted, "no example evicted anything"


def test_memory_example_gaps_widen_only_the_evicted_stretch(protocol):
    """With gaps, the tokens are the same, positions still strictly increase, the retained units stay contiguous,
    and some examples span more positions than without gaps."""
    p = protocol
    audio = np.zeros(16000 * len(UNITS), dtype=np.float32)
    wider = 0
    for seed in range(16):
        plain = build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(seed), "after_content", max_gap=0)
        ex = build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(seed), "after_content", max_gap=300)
        assert ex.ids.tolist() == plain.ids.tolist()  # the same tokens, only positions move
        pos = ex.positions
        assert (np.diff(pos) > 0).all()
        retained = int(np.flatnonzero(ex.ids == p.id("unit"))[0])
        assert (np.diff(pos[retained:]) == 1).all(), "retained units are whole and contiguous"
        wider += int(pos[-1] > plain.positions[-1])
    assert wider > 0, "no example widened its evicted stretch"


def test_memory_examples_train_and_adapter_resumes(protocol, tmp_path):
    """Memory examples alone train (their loss falls, no distillation term to break), and `--init-adapter` restores
    exactly the saved adapter: its merged model equals the adapter merged by `merge_side_channel`."""
    pytest.importorskip("peft")
    from ticktock.model.adapter import merge_side_channel
    from ticktock.train.side_channel.adapters import LoRA

    from sc_recipes import run_tiny, tiny_recipe

    p = protocol
    base = random_model(7, p.vocab_size, std=0.1)
    audio = np.random.default_rng(2).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1

    def make(seed: int):
        return build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(seed), "after_content", max_len=400)

    log = run_tiny(tmp_path / "run", tiny_recipe(steps=80, lr=1e-2), make, copy.deepcopy(base), p.tokenizer)
    mem = [r["mem"] for r in log if "mem" in r]
    assert len(mem) >= 75 and all(np.isfinite(mem)), mem
    assert np.mean(mem[-5:]) < 0.6 * np.mean(mem[:5]), f"memory loss did not fall: {mem}"

    adapter = tmp_path / "run" / "adapter"
    want = merge_side_channel(copy.deepcopy(base), adapter)
    resumed = copy.deepcopy(base)
    lora = LoRA()
    lora.prepare(resumed, [p.id("asr_start"), p.id("asr_end")], 5, adapter)
    lora.peft.merge_and_unload()
    for (name, a), (_, b) in zip(want.lm.named_parameters(), resumed.lm.named_parameters()):
        assert torch.allclose(a, b, atol=1e-5), name


def test_long_memory_examples_reach_minutes_back(shipped_protocol):
    """`long_share` examples come from a 5-10 minute session rendered once and cut `long_reuse` times: each is an
    a2t cache within `long_max_len` tokens whose logical positions span far more than it holds; with
    `recall_share` 1 each one's supervised outputs end with (the end of) one of the session's recall answers."""
    from ticktock.scenarios.suites import GENERATORS
    from ticktock.train.base import _WORKER
    from ticktock.train.side_channel.mixture import Mixture
    from ticktock.train.side_channel.sources.long import LongSource

    p = shipped_protocol
    factory = Mixture(p, [LongSource(max_len=2048, reuse=6, recall_share=1.0)], "after_content")
    answers = {r["answer"] for r in GENERATORS["long"](random.Random("train-long:100")).recall}
    _WORKER.pop("long", None)
    try:
        examples = [factory(100 + i) for i in range(6)]
        assert _WORKER["long"].left == 0
        for ex in examples:
            assert len(ex.ids) <= 2048 and np.all(np.diff(ex.positions) > 0)
            said = p.decode([int(t) for t in ex.memory_labels if t != IGNORE])
            tail = " ".join(said.split()[-3:])  # a long answer may begin before the retained units
            assert any(a.endswith(tail) for a in answers), (said[-80:], answers)
        assert max(int(ex.positions[-1]) for ex in examples) > 2 * 2048
        factory(200)
        assert _WORKER["long"].left == 5  # a fresh session once one is used up
    finally:
        _WORKER.pop("long", None)


def test_short_memory_examples_end_at_recall_answers(shipped_protocol):
    """With `recall_share` 1, a short session's memory example ends at one of its recall answers: the
    dictation lies in the evicted units (text only), the question and the answer in the retained ones."""
    from ticktock.scenarios.suites import SUITES
    from ticktock.train.base import draw_training_script
    from ticktock.train.side_channel.mixture import Mixture
    from ticktock.train.side_channel.sources.memory import MemorySource

    p = shipped_protocol
    weights = {f: 0.0 for f in SUITES["train"].families} | {"dictation_recall": 1.0}
    factory = Mixture(p, [MemorySource(recall_share=1.0)], "after_content", weights)
    for seed in range(3):
        answers = {r["answer"] for r in draw_training_script(random.Random(seed), weights).recall}
        ex = factory(seed)
        said = p.decode([int(t) for t in ex.memory_labels if t != IGNORE])
        assert any(said.rstrip().endswith(a) for a in answers), (said[-80:], answers)
        assert np.all(np.diff(ex.positions) > 0)


def test_memory_end_prefers_recall_answers_by_share():
    full, compact = [20] * 30, [5] * 30
    ends = [memory_end(full, compact, 10, 5, 400, [4, 9], random.Random(s), recall_ends=[25], recall_share=1.0)
            for s in range(20)]
    assert set(ends) == {25}
    for s in range(50):  # share 0: exactly the draw without recall ends (any fitting unit or a reply end)
        assert (memory_end(full, compact, 10, 5, 400, [4, 9], random.Random(s), recall_ends=[25])
                == memory_end(full, compact, 10, 5, 400, [4, 9], random.Random(s)))
    too_far = {memory_end(full, compact, 10, 5, 150, [4, 9], random.Random(s), recall_ends=[25], recall_share=1.0)
               for s in range(20)}
    assert 25 not in too_far  # a recall end that does not fit max_len is never forced


def test_memory_example_ends_where_asked(protocol):
    """`end` fixes the window's last unit (the recall probe ends at an answer): the example ends with its outputs."""
    p = protocol
    audio = np.zeros(16000 * len(UNITS), dtype=np.float32)
    for end in (3, 10, len(UNITS)):
        ex = build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(end), "after_content",
                                  max_gap=0, end=end)
        out, _, _ = unit_tokens(p, UNITS[end - 1], WORDS[end - 1], "after_content")
        assert ex.ids.tolist()[-len(out):] == out and ex.n_units == min(end, RETENTION_UNITS)


def test_recall_marks_the_predictions_of_a_retained_recall_answer_only(protocol):
    """`recall` is set exactly where the next token is a native output of a retained recall unit: an answer
    evicted from the window, and every other unit, stay unmarked."""
    p = protocol
    units = copy.deepcopy(UNITS)
    units[2].recall = units[9].recall = True  # unit 2 is evicted from a window ending at unit 10
    audio = np.zeros(16000 * len(units), dtype=np.float32)
    ex = build_memory_example(p, "hello", units, WORDS, audio, random.Random(0), "after_content", max_gap=0, end=10)
    out, roles, _ = unit_tokens(p, units[9], WORDS[9], "after_content")
    answer = [t for t, r in zip(out, roles) if r == NATIVE]
    marked = np.flatnonzero(ex.recall)
    assert ex.memory_labels[marked].tolist() == answer
    assert (marked + 1 >= len(ex.ids) - len(out)).all()  # all within the last unit's outputs
    plain = build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(0), "after_content", max_gap=0, end=10)
    assert not plain.recall.any() and plain.ids.tolist() == ex.ids.tolist()


@pytest.mark.parametrize("placement", ["after_decision", "after_content"])
def test_local_distillation_pairs_the_retained_ordinary_units_with_the_base(protocol, placement):
    """`teacher_units` T: the teacher is the prefix and the last T units whole without segments; the student's
    distilled predictions are the retained units' native ones except a recall answer's, paired token for token
    with the teacher's, and both read the same audio embeddings for the same unit."""
    p, e = protocol, protocol.audio_per_chunk
    units = copy.deepcopy(UNITS)
    units[9].recall = True  # a retained recall answer: cross-entropy and the `recall` term only
    audio = np.random.default_rng(3).standard_normal(16000 * len(units)).astype(np.float32) * 0.1
    end, t = 11, 8
    ex = build_memory_example(p, "hello", units, WORDS, audio, random.Random(1), placement, max_gap=0, end=end,
                              teacher_units=t)
    r0, t0 = end - RETENTION_UNITS, end - t
    prefix = p.prefix_ids("hello")
    want_ids = list(prefix)
    for u in units[t0:end]:
        tr = p.tool_result_ids(u.tool_result) if u.tool_result else []
        want_ids += [p.id("unit")] + [p.id("pad")] * e + tr + p.output_ids(u.decision, u.content, u.turn_end)
    assert ex.teacher_ids.tolist() == want_ids
    assert ex.n_units == t and ex.audio_slot.max() < t * e and ex.teacher_slot.max() == t * e - 1
    # the student's audio slots are the teacher's for the same (retained) units
    assert sorted(s for s in ex.audio_slot.tolist() if s >= 0) == list(range((r0 - t0) * e, t * e))
    student = ex.labels[ex.labels != IGNORE].tolist()
    teacher = ex.teacher_labels[ex.teacher_labels != IGNORE].tolist()
    ordinary = [k for k in range(r0, end) if not units[k].recall]
    assert student == teacher == [tok for k in ordinary for tok in p.output_ids(units[k].decision, units[k].content,
                                                                                 units[k].turn_end)]
    assert not (ex.labels != IGNORE)[ex.recall].any(), "a recall answer is not distilled"
    assert (ex.labels[ex.labels != IGNORE] == ex.memory_labels[ex.labels != IGNORE]).all()
    assert np.all(np.diff(ex.teacher_positions) > 0)


def test_local_distillation_trains(protocol, tmp_path):
    """Memory examples with a teacher go through the distillation terms (kd finite and falling)."""
    pytest.importorskip("peft")
    from sc_recipes import run_tiny, tiny_recipe

    p = protocol
    audio = np.random.default_rng(4).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1

    def make(seed: int):
        return build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(seed), "after_content",
                                    max_len=400, teacher_units=8)

    log = run_tiny(tmp_path / "run", tiny_recipe(lr=1e-2), make, random_model(7, p.vocab_size, std=0.1), p.tokenizer)
    kd = [r["kd"] for r in log if "kd" in r]
    assert len(kd) >= 25 and all(np.isfinite(kd)) and max(kd) > 0, kd
