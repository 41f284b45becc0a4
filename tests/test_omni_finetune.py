"""`train base --init` from a published checkpoint (a tiny random Qwen2.5-Omni thinker built with transformers'
own classes by the recipe's `make_checkpoint.build`): the protocol's missing tokens are added, the tower's
training path equals its stream, a few CPU steps run and learn, and the saved model runs sessions."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from ticktock.audio.whisper_mel import MelFloor  # noqa: E402
from ticktock.protocol import PROTOCOL_FILE, Decision  # noqa: E402
from ticktock.runtime import load_runtime  # noqa: E402
from ticktock.session import DuplexSession  # noqa: E402
from ticktock.train.examples import UnitSpec, build_example, window_audio  # noqa: E402
from ticktock.train.init_checkpoint import init_from_checkpoint  # noqa: E402
from ticktock.train.tower_audio import stream_mel, tower_embeddings, unit_floors  # noqa: E402
from ticktock.train.trainer import collate, model_loss  # noqa: E402

from conftest import CORPUS, noise_chunks, steer_greedy  # noqa: E402

RECIPE = Path(__file__).resolve().parent.parent / "experiments" / "omni_finetune" / "make_checkpoint.py"
# a tokenizer without the FIM and repository tokens the thinker's protocol preset maps listen/speak/... onto
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>", "<|IMAGE|>",
            "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>", "<tool_call>", "</tool_call>"]
ADDED = ["<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"]
AUDIO = dict(num_mel_bins=128, d_model=32, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=64,
             n_window=100, max_source_positions=1500)
TEXT = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            tie_word_embeddings=False)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    spec = importlib.util.spec_from_file_location("make_checkpoint", RECIPE)
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    return recipe.build(tmp_path_factory.mktemp("thinker"), AUDIO, TEXT, bpe_size=300, texts=CORPUS * 4,
                        specials=SPECIALS)


def speech(seconds: int, seed: int = 0) -> np.ndarray:
    """Noise whose loudness changes every second (so the stream's running floor moves), fp16-exact as
    training examples hold audio."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(16000) * rng.choice([1e-3, 0.05, 0.4]) for _ in range(seconds)])
    return x.astype(np.float16).astype(np.float32)


def test_protocol_tokens_the_tokenizer_lacks_are_added(checkpoint):
    model, tok, proto, spec = init_from_checkpoint(checkpoint)
    assert spec["name"] == "qwen2.5-omni-thinker" == proto.name
    ids = [tok.token_to_id(t) for t in ADDED]
    assert None not in ids and min(ids) >= 300  # after the checkpoint's own tokens
    assert proto.id("listen") == tok.token_to_id("<|fim_prefix|>")
    dec = model.cfg.decoder
    assert dec.tokenizer_vocab == tok.get_vocab_size() and dec.vocab_size >= tok.get_vocab_size()
    known = tok.get_vocab_size() - len(ADDED)
    for table in (model.lm.model.embed_tokens.weight, model.lm.lm_head.weight):
        assert table.shape[0] == dec.vocab_size
        torch.testing.assert_close(table[ids], table[:known].mean(0).expand(len(ids), -1))


@torch.no_grad()
def test_training_audio_is_what_the_stream_pushes(checkpoint):
    """Windows starting at even and odd units, batched: unit u's embeddings equal `QwenOmniStream.push`'s
    for unit u of the session (its running log-mel floor, its 2 s windows), fp32 atol 1e-5."""
    model, *_ = init_from_checkpoint(checkpoint)
    audio, units, chunk = speech(9), 3, 16000
    stream = model.audio.streaming(chunk)
    assert stream.mel.floor == MelFloor()  # the running floor: it depends on what came before the window
    pushed = [stream.push(audio[u * chunk:(u + 1) * chunk]) for u in range(9)]
    floors = unit_floors(stream_mel(model, chunk), audio, 9)
    starts = [0, 1, 4, 5]
    b = {"audio": torch.from_numpy(np.stack([window_audio(audio, u0, u0 + units, chunk) for u0 in starts])).float(),
         "floor": torch.from_numpy(np.stack([floors[np.arange(u0 - 1, u0 + units).clip(0)] for u0 in starts])),
         "unit0": torch.tensor(starts)}
    got = tower_embeddings(model, b, train=False).reshape(len(starts), units, 25, -1)
    for i, u0 in enumerate(starts):
        for k in range(units):
            torch.testing.assert_close(got[i, k], pushed[u0 + k], atol=1e-5, rtol=0)


def test_examples_lay_units_out_as_a_session_does(checkpoint):
    _, _, p, _ = init_from_checkpoint(checkpoint)
    units = [UnitSpec(Decision.LISTEN), UnitSpec(Decision.SPEAK, "okay", turn_end=True, heard_from=0)]
    rngs = (random.Random(seed) for seed in range(100))
    ex = next(e for e in (build_example(p, "hello", units, speech(2), rng, max_offset=1,
                                        floors=np.array([-9.0, -8.0])) for rng in rngs) if e.n_units == 2)
    unit = [p.id("unit"), *[p.id("unit")] * 25, p.id("audio_end")]  # audio slots hold the filler (the unit id)
    body = p.prefix_ids("hello") + unit + [p.id("listen")] + unit + p.output_ids(Decision.SPEAK, "okay", True)
    assert ex.ids.tolist() == body and ex.first_unit == 0 and ex.mel_floor.tolist() == [-9.0, -9.0, -8.0]
    at = ex.ids.tolist().index(p.id("audio_end"))
    assert ex.labels[at] == p.id("listen")  # the decision is predicted from `<|audio_eos|>`, as in a session


def test_loss_falls_on_a_fixed_batch(checkpoint):
    from ticktock.train.base import ExampleFactory
    from ticktock.train.examples import filler_id

    model, _, p, _ = init_from_checkpoint(checkpoint)
    factory = ExampleFactory(p, max_len=200, transcribe_share=0.5, mel=stream_mel(model, 16000))
    b = collate([factory(s) for s in range(3)], filler_id(p), 16000, "cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    model.train()
    for _ in range(8):
        loss, _ = model_loss(model, b, train=False)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert all(np.isfinite(losses)) and losses[-1] < 0.8 * losses[0], losses
    assert all(p.grad is not None for p in model.audio.parameters())  # the tower trains with the LM


def test_train_base_from_a_checkpoint_saves_a_model_every_command_loads(checkpoint, tmp_path, capsys):
    from ticktock.cli import main

    out = tmp_path / "run"
    assert main(["train", "base", "--init", str(checkpoint), "--out", str(out), "--steps", "3", "--batch", "2",
                 "--workers", "1", "--device", "cpu", "--set", "buffer=8", "max_len=200", "warmup=1"]) == 0
    assert "word_weight 0.5 ignored" in capsys.readouterr().out
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert log and all(np.isfinite(r["loss"]) for r in log)
    saved = out / "model"
    assert json.loads((saved / PROTOCOL_FILE).read_text())["name"] == "qwen2.5-omni-thinker"
    assert json.loads((saved / "config.json").read_text())["ticktock"]["tower"]["kind"] == "qwen2.5-omni-audio"
    rt = load_runtime(saved)
    assert rt.protocol.name == "qwen2.5-omni-thinker" and rt.model.cfg.tower is not None
    model = steer_greedy(rt.model, rt.protocol, {"speak": 0.3, "listen": 0.2, "chunk_eos": 0.05})
    chunks = noise_chunks(4, seed=3)
    runs = {}
    for name in ("ar", "sl"):
        session = DuplexSession(model, rt.protocol, decoder=name, engine="eager")
        runs[name] = [r.tokens for r in session.run(chunks)]
    assert runs["sl"] == runs["ar"]
    assert max(len(t) for t in runs["ar"]) > 2  # units of several tokens, where decoders could part
