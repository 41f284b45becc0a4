"""A deeper audio encoder starts where the model is: the added layers are the identity, train, and persist."""

import pytest
import torch

from conftest import random_model
from ticktock.model.deepen import deepen_audio_encoder, deepen_decoder
from ticktock.model.io import load_model, save_model
from ticktock.train.base import initial_model
from ticktock.train.base_recipe import BaseRecipe


def _mel(seed: int, model) -> tuple[torch.Tensor, torch.Tensor]:
    """A (2, F, n_mels) chunk of log-mel and its (2, C*F, n_mels) left context."""
    cfg = model.cfg.audio
    g = torch.Generator().manual_seed(seed)
    mel = torch.randn(2, cfg.frames_per_chunk, cfg.n_mels, generator=g)
    return mel, torch.randn(2, cfg.context_chunks * cfg.frames_per_chunk, cfg.n_mels, generator=g)


def test_added_layers_keep_the_encoding_exactly(protocol):
    model = random_model(3, protocol.vocab_size)
    mel, ctx = _mel(0, model)
    before = model.audio(mel, ctx)
    assert deepen_audio_encoder(model, 3) == 2
    assert len(model.audio.blocks.layers) == 3 and model.cfg.audio.layers == 3
    assert torch.equal(model.audio(mel, ctx), before)


def test_added_layers_train():
    """Their zeroed output projections get a gradient, so the new depth is used once training moves them."""
    model = random_model(4, 400)
    deepen_audio_encoder(model, 2)
    mel, ctx = _mel(1, model)
    model.audio(mel, ctx).square().sum().backward()
    new = model.audio.blocks.layers[1]
    assert new.self_attn.out_proj.weight.grad.abs().sum() > 0 and new.linear2.weight.grad.abs().sum() > 0


def test_deepened_model_saves_and_loads_at_its_depth(tmp_path, protocol):
    model = random_model(5, protocol.vocab_size)
    save_model(model, protocol.tokenizer, tmp_path / "a")
    deepen_audio_encoder(model, 4)
    save_model(model, protocol.tokenizer, tmp_path / "b")
    a, _ = load_model(tmp_path / "a", "cpu", torch.float32)
    b, _ = load_model(tmp_path / "b", "cpu", torch.float32)
    assert len(b.audio.blocks.layers) == 4
    mel, ctx = _mel(2, a)
    assert torch.equal(a.audio(mel, ctx), b.audio(mel, ctx))


def test_training_continues_a_model_deepened(tmp_path, protocol):
    """`train base --init DIR --set audio_layers=N`: the init's weights, N encoder layers, the same encoding."""
    save_model(random_model(6, protocol.vocab_size), protocol.tokenizer, tmp_path / "init")
    start, _ = load_model(tmp_path / "init", "cpu", torch.float32)
    model, *_ = initial_model("test", 0, init=tmp_path / "init", audio_layers=3)
    assert len(model.audio.blocks.layers) == 3
    mel, ctx = _mel(3, model)
    assert torch.equal(model.audio(mel, ctx), start.audio(mel, ctx))
    fresh, *_ = initial_model("test", 0, audio_layers=2)  # no init: the preset built at that depth
    assert len(fresh.audio.blocks.layers) == 2


def test_depth_only_grows(protocol):
    model = random_model(7, protocol.vocab_size)
    deepen_audio_encoder(model, 2)
    with pytest.raises(ValueError, match="already has 2 layers"):
        deepen_audio_encoder(model, 1)
    assert deepen_audio_encoder(model, 2) == 0


def test_recipe_refuses_bad_depths():
    with pytest.raises(ValueError, match="audio_layers must be at least 1"):
        BaseRecipe(audio_layers=0)
    with pytest.raises(ValueError, match="audio tower"):
        BaseRecipe(model="qwen2.5-omni-7b-thinker", word_weight=0, audio_layers=6)


def _decode(model, seed: int) -> torch.Tensor:
    """Hidden states (1, 7, D) of 7 random token ids at positions 0..6."""
    ids = torch.randint(0, 50, (1, 7), generator=torch.Generator().manual_seed(seed))
    return model.lm(model.lm.embed(ids), torch.arange(7)[None])


def test_added_decoder_blocks_keep_the_output_and_train(protocol):
    model = random_model(7, protocol.vocab_size)
    before = _decode(model, 0)
    depth = len(model.lm.model.layers)
    assert deepen_decoder(model, depth + 2) == 2
    assert model.cfg.decoder.num_hidden_layers == depth + 2
    assert torch.equal(_decode(model, 0), before)
    blocks = model.lm.model.layers
    assert [b.self_attn.layer for b in blocks] == list(range(depth + 2))  # each writes its own cache layer
    _decode(model, 1).square().sum().backward()
    new = [b for b in blocks if not b.mlp.down_proj.weight.detach().any()]
    assert len(new) == 2 and new[0] is not blocks[-1]  # spread through the stack, not all at its end
    assert all(b.self_attn.o_proj.weight.grad.abs().sum() > 0 and b.mlp.down_proj.weight.grad.abs().sum() > 0
               for b in new)
    with pytest.raises(ValueError, match="only added"):
        deepen_decoder(model, depth)


def test_a_deepened_decoder_saves_loads_and_trains_from_an_init(tmp_path, protocol):
    """`train base --init DIR --set decoder_layers=N`: the init's weights, N decoder blocks, the same output."""
    save_model(random_model(8, protocol.vocab_size), protocol.tokenizer, tmp_path / "init")
    start, _ = load_model(tmp_path / "init", "cpu", torch.float32)
    depth = len(start.lm.model.layers)
    model, *_ = initial_model("test", 0, init=tmp_path / "init", decoder_layers=depth + 1)
    save_model(model, protocol.tokenizer, tmp_path / "deep")
    loaded, _ = load_model(tmp_path / "deep", "cpu", torch.float32)
    assert len(loaded.lm.model.layers) == depth + 1
    assert torch.allclose(_decode(loaded, 2), _decode(start, 2), atol=1e-6)
    with pytest.raises(ValueError, match="--init"):
        BaseRecipe(decoder_layers=depth + 1).check_start(None, None)
