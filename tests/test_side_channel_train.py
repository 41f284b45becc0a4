"""Side-channel training: word-to-unit targets, student/teacher examples, and a CPU smoke run."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import torch

from ticktock.protocol import Decision
from ticktock.scenarios.word_units import word_unit, word_units
from ticktock.train.examples import IGNORE, UnitSpec
from ticktock.train.side_channel.examples import build_side_channel_example

from conftest import random_model

UNITS = [UnitSpec(Decision.LISTEN), UnitSpec(Decision.LISTEN), UnitSpec(Decision.SPEAK, "sure, here you go"),
         UnitSpec(Decision.TOOL, 'find_flights(origin="TYO")', tool_result="flight JL123"),
         UnitSpec(Decision.SPEAK, "okay", turn_end=True)]
WORDS = ["", "what is", "the capital of france", "", "okay"]


@pytest.mark.parametrize("end,chunk,unit", [(0.0, 1.0, 0), (0.3, 1.0, 0), (0.5, 1.0, 0), (0.51, 1.0, 1),
                                            (1.7, 1.0, 2), (2.5, 1.0, 2), (0.2, 0.5, 1), (1.26, 0.5, 3)])
def test_word_unit_is_ceil_of_end_plus_delay(end, chunk, unit):
    """k = ceil((e + 0.5)/Δ), 1-based: the 0-based unit k − 1 is the first to hear 0.5 s past the word."""
    assert word_unit(end, chunk) == unit


def test_word_units_user_words_once_each():
    words = [{"word": "book", "end": 0.4, "speaker": "user"}, {"word": "a", "end": 0.6, "speaker": "user"},
             {"word": "noise", "end": 0.7, "speaker": "background"}, {"word": "flight", "end": 1.2, "speaker": "user"},
             {"word": "late", "end": 3.9, "speaker": "user"}]
    assert word_units(words, 3) == ["book", "a flight", "late"]  # the last word past the end goes to the last unit


def test_delay_jitter_draws_one_delay_per_session(protocol):
    from ticktock.train.side_channel.mixture import Mixture
    from ticktock.train.side_channel.sources.plain import PlainSource

    assert {Mixture(protocol, [PlainSource()]).jitter(s) for s in range(20)} == {None}
    jittered = Mixture(protocol, [PlainSource()], delay_jitter=0.3)
    delays = [jittered.jitter(s) or 0.5 for s in range(200)]
    assert all(0.2 <= d <= 0.8 for d in delays) and min(delays) < 0.3 and max(delays) > 0.7
    assert 70 <= delays.count(0.5) <= 130  # half the sessions keep the rule's timing
    assert delays == [jittered.jitter(s) or 0.5 for s in range(200)]  # a session's delay depends on its seed only


def test_jittered_sessions_teach_through_distillation_only(protocol):
    from ticktock.train.side_channel.mixture import Rendered

    audio = np.random.default_rng(0).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1
    ex = build_side_channel_example(protocol, "hello", UNITS, WORDS, audio, random.Random(0), "after_content")
    assert (ex.asr_labels != IGNORE).any() and (ex.open_target >= 0).any()
    labels = ex.labels.copy()
    out = Rendered(("hello", UNITS, WORDS, audio), [], jittered=True).finish(ex)
    assert (out.asr_labels == IGNORE).all() and (out.open_target == -1).all()
    assert np.array_equal(out.labels, labels) and (out.teacher_labels != IGNORE).any()  # distillation kept


@pytest.mark.parametrize("placement", ["after_decision", "after_content"])
def test_student_is_teacher_plus_segments(protocol, placement):
    p = protocol
    audio = np.random.default_rng(0).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1
    for seed in range(6):
        ex = build_side_channel_example(p, "hello", UNITS, WORDS, audio, random.Random(seed), placement, max_len=400)
        ids, t_ids = ex.ids.tolist(), ex.teacher_ids.tolist()
        # removing the segments gives the teacher's sequence back
        keep, inside = [], False
        for t in ids:
            inside |= t == p.id("asr_start")
            if not inside:
                keep.append(t)
            inside &= t != p.id("asr_end")
        assert keep == t_ids
        # native predictions: the same tokens in the same order
        assert ex.labels[ex.labels != IGNORE].tolist() == ex.teacher_labels[ex.teacher_labels != IGNORE].tolist()
        # every segment is opened at a designated point and supervised token by token
        starts = [i for i, t in enumerate(ids) if t == p.id("asr_start")]
        assert [int(ex.open_target[i - 1]) for i in starts] == [1] * len(starts)
        assert (ex.open_target == 1).sum() == len(starts) and (ex.open_target == 0).sum() >= 1
        for s in starts:
            e = ids.index(p.id("asr_end"), s)
            assert ex.asr_labels[s:e].tolist() == ids[s + 1 : e + 1]
            before = ids[s - 1]
            if placement == "after_decision":
                assert before in (p.id("speak"), p.id("tool"), p.id("listen"))
            else:
                assert before in p.end_ids
        assert (ex.asr_labels != IGNORE).sum() == sum(ids.index(p.id("asr_end"), s) - s for s in starts)
        assert ex.positions[-1] - ex.teacher_positions[-1] == len(ids) - len(t_ids)
        assert np.array_equal(ex.audio_slot >= 0, np.array(ids) == p.id("pad"))


def test_train_side_channel_smoke(protocol, tmp_path):
    """A few CPU steps on a `test`-preset model: the transcript loss falls, the merged model loads, only the two
    new embedding rows move, and distillation keeps the base task closer to the base than CE alone."""
    pytest.importorskip("peft")
    from safetensors.torch import load_file

    from ticktock.model import load_model
    from ticktock.train.side_channel.batches import collate_side_channel
    from ticktock.train.trainer import audio_embeddings, embed_inputs

    from sc_recipes import run_tiny, tiny_recipe

    p = protocol
    base = random_model(5, p.vocab_size, std=0.1)
    audio = np.random.default_rng(1).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1

    def make(seed: int):
        rng = random.Random(seed)
        return build_side_channel_example(p, "hello", UNITS, WORDS, audio, rng,
                                          rng.choice(["after_decision", "after_content"]), max_len=400)

    b = collate_side_channel([make(s) for s in range(4)], p.id("pad"), "cpu")

    @torch.no_grad()
    def native(m):  # log-probabilities at the native prediction positions of segment-free sequences
        emb = audio_embeddings(m, b["audio"], train=False)
        h = m.lm(embed_inputs(m, b["t_ids"], b["t_slot"], emb), b["t_pos"])
        return m.lm.logits(h[b["t_labels"] != IGNORE]).log_softmax(-1)

    ref = native(base)
    kl = {}
    for distill in (True, False):
        out = tmp_path / str(distill)
        recipe = tiny_recipe(terms=("ce", "distill") if distill else ("ce",), steps=40, placement="both")
        log = run_tiny(out, recipe, make, copy.deepcopy(base), p.tokenizer)
        ce = [r["ce"] for r in log if "ce" in r]
        assert np.mean(ce[-5:]) < 0.6 * np.mean(ce[:5]), f"transcript loss did not fall: {ce}"
        for name in ("model/model.safetensors", "adapter/adapter_model.safetensors", "adapter/asr_rows.safetensors",
                     "loss.png", "side_channel.json", "train_log.jsonl"):
            assert (out / name).exists(), name
        merged, _ = load_model(out / "model")
        kl[distill] = float((ref.exp() * (ref - native(merged))).sum(-1).mean())
        rows = [p.id("asr_start"), p.id("asr_end")]
        emb_b, emb_m = base.lm.model.embed_tokens.weight, merged.lm.model.embed_tokens.weight
        assert not torch.allclose(emb_b[rows], emb_m[rows], atol=1e-2)  # the two new rows trained
        saved = load_file(str(out / "adapter" / "asr_rows.safetensors"))
        assert saved["ids"].tolist() == rows and torch.allclose(saved["weight"], emb_m[rows], atol=2e-3)
        others = torch.ones(len(emb_b), dtype=torch.bool)
        others[rows] = False
        assert torch.allclose(emb_b[others], emb_m[others], atol=2e-3)  # every other row frozen (fp16 rounding)
    assert kl[True] < 0.6 * kl[False], f"distillation should keep the base task closer: KL {kl}"


def _train_briefly(p, out, recipe, seed: int):
    """30 CPU steps of `train_side_channel` on a `test`-preset model and one session, checking the transcript loss
    falls; returns (the base model, the log, the example maker)."""
    from sc_recipes import run_tiny

    base = random_model(seed, p.vocab_size, std=0.1)
    audio = np.random.default_rng(seed - 3).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1

    def make(s: int):
        return build_side_channel_example(p, "hello", UNITS, WORDS, audio, random.Random(s), "after_content",
                                          max_len=400)

    log = run_tiny(out, recipe, make, copy.deepcopy(base), p.tokenizer)
    ce = [r["ce"] for r in log if "ce" in r]
    assert np.mean(ce[-5:]) < 0.7 * np.mean(ce[:5]), f"transcript loss did not fall: {ce}"
    last = log[-1]  # the log counts what the workers made against what was drawn
    assert last["made"] >= last["buffer"] and last["draws_per_example"] == round(30 * 4 / last["made"], 2)
    return base, log, make


def test_a_base_beside_a_runs_adapter_gets_it_applied_and_the_merged_model_is_left_alone(protocol, tmp_path):
    """OUT/model carries the merged marker, so it loads as it is; a base copied into the run folder (next to
    side_channel.json and adapter/) is not taken for the merged model: the adapter is applied to it."""
    pytest.importorskip("peft")
    from ticktock.model import save_model
    from ticktock.model.adapter import is_merged
    from ticktock.runtime import load_runtime

    from sc_recipes import tiny_recipe

    base, _, _ = _train_briefly(protocol, tmp_path / "run", tiny_recipe(), seed=9)
    save_model(base, protocol.tokenizer, tmp_path / "run" / "base")
    assert is_merged(tmp_path / "run" / "model") and not is_merged(tmp_path / "run" / "base")
    merged = load_runtime(tmp_path / "run" / "model", side_channel=True).model.state_dict()
    applied = load_runtime(tmp_path / "run" / "base", side_channel=True).model.state_dict()
    plain = load_runtime(tmp_path / "run" / "base").model.state_dict()
    moved = [k for k in merged if not torch.allclose(merged[k], plain[k], atol=2e-3)]
    assert moved, "training moved no weight"
    for k in merged:
        assert torch.allclose(applied[k], merged[k], atol=2e-3), k


def test_full_side_channel_run_trains_the_whole_decoder_and_ships_as_a_whole_model(protocol, tmp_path):
    """A `full` recipe: the transcript loss falls with every decoder weight trainable (attention and MLP weights move), the
    encoder stays frozen, OUT/model loads as the side-channel model (no adapter/), and shipped beside a base as
    `<dir>-side-channel/` it replaces the base's weights when the side channel is asked for."""
    import shutil

    from ticktock.runtime import load_runtime

    from sc_recipes import tiny_recipe

    p = protocol
    base, _, _ = _train_briefly(p, tmp_path / "run", tiny_recipe("full"), 7)
    assert not (tmp_path / "run" / "adapter").exists()
    trained = load_runtime(tmp_path / "run" / "model", side_channel=True).model
    moved = [n for n, prm in base.lm.named_parameters()
             if not torch.allclose(prm, dict(trained.lm.named_parameters())[n], atol=2e-3)]
    assert any("mlp" in n for n in moved) and any("attn" in n for n in moved), moved  # more than two rows moved
    for n, prm in base.audio.named_parameters():  # the encoder is frozen
        torch.testing.assert_close(dict(trained.audio.named_parameters())[n], prm, atol=2e-3, rtol=1e-3)
    # shipped beside a base model: the side channel is that whole model; without it, the base
    from ticktock.model import save_model
    save_model(base, p.tokenizer, tmp_path / "ship" / "m")
    shutil.copytree(tmp_path / "run" / "model", tmp_path / "ship" / "m-side-channel")
    plain = load_runtime(tmp_path / "ship" / "m").model
    side = load_runtime(tmp_path / "ship" / "m", side_channel=True)
    assert side.name.endswith("+side-channel")
    for (n, a), b, c in zip(side.model.state_dict().items(), trained.state_dict().values(),
                            plain.state_dict().values()):
        torch.testing.assert_close(a, b, msg=n)
    assert any(not torch.equal(a, c) for a, c in zip(side.model.state_dict().values(), plain.state_dict().values()))


def test_pause_units_mark_where_their_decision_is_predicted(protocol):
    """`UnitSpec.pause` marks, in the student sequence, the one position that predicts each pause unit's decision."""
    p = protocol
    units = [UnitSpec(Decision.LISTEN), UnitSpec(Decision.LISTEN, pause=True), UnitSpec(Decision.LISTEN, pause=True),
             *UNITS[2:]]
    audio = np.random.default_rng(0).standard_normal(16000 * len(units)).astype(np.float32) * 0.1
    whole = 0
    for seed in range(30):
        ex = build_side_channel_example(p, "hello", units, [""] + WORDS, audio, random.Random(seed), "after_content",
                                        max_len=400)
        at = np.flatnonzero(ex.pause)
        ids = ex.ids.tolist()
        assert all(ids[i + 1] == p.id("listen") == ex.labels[i] for i in at)  # the decision is the label there
        if ex.n_units == len(units):  # a window over the whole session holds both pause units
            whole += 1
            markers = [i for i, t in enumerate(ids) if t == p.id("unit")]
            assert len(at) == 2 and all(markers[k] < i < markers[k + 1] for k, i in zip((1, 2), at))
    assert whole > 0


def _lora_loss(p, model):
    """loss(*terms): the `SideChannelLoss` of those terms over one LoRA whose update is non-zero (the adapted model
    differs), each call drawing the encoder's training-time augmentation alike."""
    from ticktock.train.side_channel.adapters import LoRA
    from ticktock.train.side_channel.loss import SideChannelLoss

    lora = LoRA()
    lora.prepare(model, [p.id("asr_start"), p.id("asr_end")], 0, None)
    with torch.no_grad():
        for name, prm in lora.peft.named_parameters():
            if "lora_B" in name:
                prm.normal_(0, 0.5, generator=torch.Generator().manual_seed(1))

    def loss(*terms):
        fn = SideChannelLoss(p, lora, list(terms))
        return lambda m, b: (torch.manual_seed(0), fn(m, b))[1]
    return loss


def test_pause_term_adds_its_weight_times_the_decision_kl_and_distill_weight_scales_distillation(protocol):
    pytest.importorskip("peft")
    from ticktock.train.side_channel.batches import collate_side_channel
    from ticktock.train.side_channel.terms.ce import SideChannelCE
    from ticktock.train.side_channel.terms.distill import Distill
    from ticktock.train.side_channel.terms.pause import PauseHold

    p = protocol
    model = random_model(5, p.vocab_size, std=0.1)
    loss = _lora_loss(p, model)
    units = [UnitSpec(Decision.LISTEN), UnitSpec(Decision.LISTEN, pause=True), *UNITS[2:]]
    audio = np.random.default_rng(2).standard_normal(16000 * len(units)).astype(np.float32) * 0.1
    batch = collate_side_channel([build_side_channel_example(p, "hello", units, WORDS, audio, random.Random(s),
                                                             "after_content", max_len=400) for s in range(2)],
                                 p.id("pad"), "cpu")
    plain, s0 = loss(SideChannelCE(), Distill())(model, batch)
    weighted, s3 = loss(SideChannelCE(), Distill(), PauseHold(weight=3.0))(model, batch)
    assert "pause" not in s0 and float(s3["pause"]) > 0
    assert torch.allclose(weighted - plain, 3.0 * s3["pause"], atol=1e-5)
    heavier, _ = loss(SideChannelCE(), Distill(weight=2.0))(model, batch)  # scales kd + dec + turn, and only them
    assert float(s0["kd"]) > 0
    assert torch.allclose(heavier - plain, s0["kd"] + s0["dec"] + s0["turn"], atol=1e-5)


def test_recall_term_adds_its_weight_times_the_answer_cross_entropy(protocol):
    pytest.importorskip("peft")
    from ticktock.train.side_channel.batches import collate_side_channel
    from ticktock.train.side_channel.memory_examples import build_memory_example
    from ticktock.train.side_channel.terms.ce import SideChannelCE
    from ticktock.train.side_channel.terms.memory import MemoryCE, RecallCE

    p = protocol
    model = random_model(5, p.vocab_size, std=0.1)
    loss = _lora_loss(p, model)
    units = [*UNITS[:-1], UnitSpec(Decision.SPEAK, "okay", turn_end=True, recall=True)]
    audio = np.random.default_rng(2).standard_normal(16000 * len(units)).astype(np.float32) * 0.1
    batch = collate_side_channel([build_memory_example(p, "hello", units, WORDS, audio, random.Random(s),
                                                       "after_content", max_gap=0, end=len(units)) for s in range(2)],
                                 p.id("pad"), "cpu")
    plain, s0 = loss(SideChannelCE(), MemoryCE())(model, batch)
    weighted, s3 = loss(SideChannelCE(), MemoryCE(), RecallCE(weight=3.0))(model, batch)
    assert "recall" not in s0 and float(s3["recall"]) > 0
    assert torch.allclose(weighted - plain, 3.0 * s3["recall"], atol=1e-5)


def test_train_side_channel_refuses_a_lora_continuing_a_whole_side_channel(tmp_path):
    """A LoRA recipe refuses an --init that already is a whole side channel, before anything is loaded."""
    from ticktock.cli import main
    from ticktock.model.adapter import mark_merged

    (tmp_path / "m").mkdir()
    mark_merged(tmp_path / "m", "full")
    with pytest.raises(SystemExit, match="already is a whole side-channel model"):
        main(["train", "side-channel", "--out", str(tmp_path / "run"), "--device", "cpu", "--init", str(tmp_path / "m")])
    assert not (tmp_path / "run").exists()


def test_hold_tags_choose_the_units_of_the_pause_term():
    """By default only units inside a paused request are marked; `backchannel` adds where a user backchannel ends."""
    from types import SimpleNamespace

    from ticktock.train.side_channel.examples import script_unit_spec

    def unit(*tags):
        return SimpleNamespace(decision="speak", content="sure", turn_end=False, tool_result=None, tags=list(tags))

    assert script_unit_spec(unit("pause")).pause and not script_unit_spec(unit("backchannel")).pause
    both = ("pause", "backchannel")
    assert script_unit_spec(unit("backchannel"), both).pause and script_unit_spec(unit("pause"), both).pause
    assert not script_unit_spec(unit("turn_end", "tool"), both).pause
    assert script_unit_spec(unit()).decision.name == "SPEAK"


def test_a_full_run_continues_from_its_own_model_with_the_plain_base_as_teacher(protocol, tmp_path):
    """`init` a full run's model: the run starts from it as it is (its segment rows not drawn anew) and distils from
    the plain `base`, not from the model it continues (whose KL at the start is small: only the segments the
    teacher does not see tell them apart)."""
    from ticktock.model import load_model, save_model

    from sc_recipes import run_tiny, tiny_recipe

    p = protocol
    base, _, make = _train_briefly(p, tmp_path / "run", tiny_recipe("full"), 7)
    save_model(base, p.tokenizer, tmp_path / "base")
    first = load_model(tmp_path / "run" / "model")[0]
    asr = [p.id("asr_start"), p.id("asr_end")]
    once = tiny_recipe("full", steps=1, lr=1e-9)
    kd = {}
    for name, teacher in (("base", tmp_path / "base"), ("itself", tmp_path / "run" / "model")):
        log = run_tiny(tmp_path / name, once, make, base=teacher, init=tmp_path / "run" / "model")
        kd[name] = log[-1]["kd"]
        rows = load_model(tmp_path / name / "model")[0].lm.model.embed_tokens.weight[asr]
        torch.testing.assert_close(rows, first.lm.model.embed_tokens.weight[asr], atol=2e-3, rtol=1e-3)
    assert kd["base"] > 3 * kd["itself"], kd
    with pytest.raises(ValueError, match="already is a whole side-channel model"):
        run_tiny(tmp_path / "x", tiny_recipe(steps=1), make, base=tmp_path / "base", init=tmp_path / "run" / "model")


def test_a_full_run_continues_from_its_decoder_alone(protocol, tmp_path):
    """`init` a full run shipped as its decoder alone (`save_decoder_side_channel`): the base supplies the encoder
    and tokenizer, the run starts from the shipped decoder as it is."""
    from ticktock.model import load_model, save_model
    from ticktock.model.adapter import save_decoder_side_channel

    from sc_recipes import run_tiny, tiny_recipe

    p = protocol
    base, _, make = _train_briefly(p, tmp_path / "run", tiny_recipe("full"), 7)
    save_model(base, p.tokenizer, tmp_path / "base")
    dec = save_decoder_side_channel(tmp_path / "run" / "model", tmp_path / "dec")
    first = load_model(tmp_path / "run" / "model")[0]
    run_tiny(tmp_path / "cont", tiny_recipe("full", steps=1, lr=1e-9), make, base=tmp_path / "base", init=dec)
    cont = load_model(tmp_path / "cont" / "model")[0]
    for (name, a), (_, b) in zip(cont.lm.named_parameters(), first.lm.named_parameters()):
        torch.testing.assert_close(a, b, atol=2e-3, rtol=1e-3, msg=name)
    for (name, a), (_, b) in zip(cont.audio.named_parameters(), base.audio.named_parameters()):
        torch.testing.assert_close(a, b.to(a.dtype), atol=2e-3, rtol=1e-3, msg=name)


def test_side_channel_sessions_render_as_their_data_says(protocol):
    """By default a side channel hears the `train` suite's rendering (the shipped one's); `data` changes that."""
    from ticktock.scenarios import EspeakRenderer, espeak_available
    from ticktock.scenarios.suites import render_script, script_at
    from ticktock.train.data import TrainingData
    from ticktock.train.side_channel.mixture import Mixture
    from ticktock.train.side_channel.sources.plain import PlainSource

    if not espeak_available():
        pytest.skip("espeak-ng not installed")
    got = Mixture(protocol, [PlainSource()]).render(script_at("heldout", 2), 5)
    want = render_script(script_at("heldout", 2), "train", EspeakRenderer(), seed=5)
    assert np.array_equal(got.session[3], want.audio)
    other = Mixture(protocol, [PlainSource()], data=TrainingData("noisy", augment=False, prompts=True))
    assert other.render(script_at("heldout", 2), 5).session[0] != got.session[0]  # a training prompt drawn
