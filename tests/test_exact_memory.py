"""Exact memory examples (`train.exact_memory`): the session whole under the runtime's eviction schedule."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import torch

from ticktock.protocol import SlotKind
from ticktock.train.examples import IGNORE
from ticktock.train.side_channel.exact_examples import build_exact_memory_example
from ticktock.train.side_channel.kv_visibility import visibility
from ticktock.train.side_channel.memory_examples import RETENTION_UNITS, build_memory_example
from ticktock.train.side_channel.examples import NATIVE, unit_tokens

from conftest import random_model
from test_memory_examples import UNITS, WORDS


@pytest.mark.parametrize("placement", ["after_decision", "after_content"])
def test_exact_example_is_the_session_whole_and_its_survivors_are_the_compacted_one(protocol, placement):
    """Every unit is laid out whole at its logical position; what the schedule leaves resident after the last unit
    is the compacted `a2t` layout token for token — but for the last token of the unit just before the retained
    window when the runtime writes it with the next unit's marker (a trailing segment's `<|asr_end|>`, or with
    after_decision a reply's terminator): labelled with that next unit, it stays."""
    p, e = protocol, protocol.audio_per_chunk
    audio = np.random.default_rng(0).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1
    for end in (3, 8, len(UNITS)):
        ex = build_exact_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(end), placement, end=end)
        whole = list(p.prefix_ids("hello"))
        for k in range(end):
            u = UNITS[k]
            tr = p.tool_result_ids(u.tool_result) if u.tool_result else []
            whole += [p.id("unit")] + [p.id("pad")] * e + tr + unit_tokens(p, u, WORDS[k], placement)[0]
        assert ex.ids.tolist() == whole and ex.n_units == end
        assert np.all(np.diff(ex.positions) > 0) and sorted(ex.audio_slot[ex.audio_slot >= 0]) == list(range(end * e))
        survivors = ex.ids[ex.kv_gone > ex.kv_write.max()].tolist()
        compact = build_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(0), placement, max_gap=0,
                                       max_offset=1, end=end).ids.tolist()
        if survivors != compact:  # the runtime's one extra survivor
            extra = [i for i in range(len(survivors)) if survivors[:i] + survivors[i + 1:] == compact]
            kind = p.output_kind(survivors[extra[0]]) if extra else None
            assert kind in (SlotKind.ASR_MARK, SlotKind.TERMINATOR) and end > RETENTION_UNITS, (end, placement)
        mask = visibility(ex.kv_write, ex.kv_gone)
        assert mask.diagonal().all(), "every token sees itself"


def test_exact_example_supervises_every_unit(protocol):
    """Native outputs of every unit (recall answers marked), every transcript token, every open decision."""
    p = protocol
    units = copy.deepcopy(UNITS)
    units[2].recall = True
    audio = np.zeros(16000 * len(units), dtype=np.float32)
    ex = build_exact_memory_example(p, "hello", units, WORDS, audio, random.Random(0), "after_content", end=len(units))
    natives = [t for k, u in enumerate(units) for t, r in zip(*unit_tokens(p, u, WORDS[k], "after_content")[:2])
               if r == NATIVE]
    assert ex.memory_labels[ex.memory_labels != IGNORE].tolist() == natives
    answer = [t for t, r in zip(*unit_tokens(p, units[2], WORDS[2], "after_content")[:2]) if r == NATIVE]
    assert ex.memory_labels[ex.recall].tolist() == answer
    said = sum(len(p.encode(w)) + 1 for w in WORDS if w)  # words and <|asr_end|>
    assert (ex.asr_labels != IGNORE).sum() == said and (ex.open_target >= 0).sum() == len(units)
    assert (ex.labels == IGNORE).all() and (ex.teacher_labels == IGNORE).all()


def test_exact_examples_train_beside_plain_ones(protocol, tmp_path):
    """A batch mixing exact and compacted memory examples trains under the runtime mask (finite, falling loss)."""
    pytest.importorskip("peft")
    from ticktock.train.side_channel.batches import collate_side_channel, runtime_mask

    from sc_recipes import run_tiny, tiny_recipe

    p = protocol
    audio = np.random.default_rng(5).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1

    def make(seed: int):
        rng = random.Random(seed)
        if seed % 2:
            return build_exact_memory_example(p, "hello", UNITS, WORDS, audio, rng, "after_content", max_len=400,
                                              recall_ends=[10], recall_share=0.5)
        return build_memory_example(p, "hello", UNITS, WORDS, audio, rng, "after_content", max_len=400)

    whole = build_exact_memory_example(p, "hello", UNITS, WORDS, audio, random.Random(0), "after_content",
                                       end=len(UNITS))  # long enough for eviction to have happened
    b = collate_side_channel([make(0), whole], p.id("pad"), "cpu")
    mask = runtime_mask(b)
    assert mask.shape == (2, b["ids"].shape[1], b["ids"].shape[1])
    assert torch.equal(mask[0], torch.ones_like(mask[0]).tril()) and not torch.equal(mask[1], mask[0])
    log = run_tiny(tmp_path / "run", tiny_recipe(steps=60, lr=1e-2), make, random_model(7, p.vocab_size, std=0.1),
                   p.tokenizer)
    mem = [r["mem"] for r in log if "mem" in r]
    # which steps draw an exact example depends on the example maker's timing: about 1 in 16 batches of 4 has none
    assert len(mem) >= 45 and all(np.isfinite(mem)) and np.mean(mem[-10:]) < 0.75 * np.mean(mem[:5]), mem


def test_factory_lays_memory_examples_out_exactly(shipped_protocol):
    """A `memory` source with the exact layout: its examples are exact ones, from the session's start."""
    from ticktock.scenarios.suites import SUITES
    from ticktock.train.side_channel.mixture import Mixture
    from ticktock.train.side_channel.sources.memory import MemorySource

    weights = {f: 0.0 for f in SUITES["train"].families} | {"dictation_recall": 1.0}
    factory = Mixture(shipped_protocol, [MemorySource(layout="exact", max_len=4096, recall_share=1.0)],
                      "after_content", weights)
    for seed in range(2):
        ex = factory(seed)
        assert ex.kv_write is not None and ex.kv_gone is not None and len(ex.kv_write) == len(ex.ids) <= 4096
        assert (ex.audio_slot >= 0).sum() == ex.n_units * shipped_protocol.audio_per_chunk
        assert (ex.memory_labels != IGNORE).sum() > 0 and ex.recall.any()
