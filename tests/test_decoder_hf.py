"""The decoder equals HF transformers' Qwen2ForCausalLM with the same weights (the oracle)."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from ticktock.engine import Engine, Segment  # noqa: E402
from ticktock.model.io import load_model  # noqa: E402


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False,
                                   max_position_embeddings=4096)
    hf = transformers.Qwen2ForCausalLM(cfg).eval()
    with torch.no_grad():
        for p in hf.parameters():
            p.normal_(0, 0.2)
    d = tmp_path_factory.mktemp("hf")
    hf.save_pretrained(d, safe_serialization=True)
    ours, _ = load_model(d)
    return hf, ours


def test_one_pass_logits_match(pair):
    hf, ours = pair
    ids = torch.randint(0, 300, (1, 24))
    ref = hf(ids).logits[0]
    h = ours.lm(ours.lm.embed(ids), torch.arange(24)[None])
    torch.testing.assert_close(ours.lm.logits(h)[0], ref, atol=1e-4, rtol=0)


def test_chunked_through_cache_matches(pair):
    hf, ours = pair
    ids = torch.randint(0, 300, (1, 24))
    ref = hf(ids).logits[0]
    eng = Engine(ours, 64)
    outs = []
    for s, e in [(0, 7), (7, 8), (8, 16), (16, 24)]:
        pos = torch.arange(s, e)
        eng.cache.reserve(pos, 0, [0] * (e - s))
        outs.append(ours.lm.logits(ours.lm(ours.lm.embed(ids[:, s:e]), pos[None], eng.cache))[0])
    torch.testing.assert_close(torch.cat(outs), ref, atol=1e-4, rtol=0)


def test_non_contiguous_positions_match(pair):
    """Logical positions with gaps (after eviction) match HF given the same position_ids."""
    hf, ours = pair
    ids = torch.randint(0, 300, (1, 12))
    pos = torch.tensor([[0, 1, 2, 10, 11, 12, 13, 40, 41, 42, 100, 101]])
    ref = hf(ids, position_ids=pos).logits[0]
    eng = Engine(ours, 64)
    outs = []
    for s, e in [(0, 3), (3, 7), (7, 12)]:
        eng.cache.reserve(pos[0, s:e], 0, [0] * (e - s))
        outs.append(ours.lm.logits(ours.lm(ours.lm.embed(ids[:, s:e]), pos[:, s:e], eng.cache))[0])
    torch.testing.assert_close(torch.cat(outs), ref, atol=1e-4, rtol=0)


def test_llama_checkpoint_imports(tmp_path):
    cfg = transformers.LlamaConfig(vocab_size=200, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False)
    hf = transformers.LlamaForCausalLM(cfg).eval()
    hf.save_pretrained(tmp_path, safe_serialization=True)
    ours, _ = load_model(tmp_path)
    assert not ours.cfg.decoder.attention_bias
    ids = torch.randint(0, 200, (1, 10))
    eng = Engine(ours, 32)
    torch.testing.assert_close(eng.forward([Segment(ids[0], [0] * 10)], 0)[0], hf(ids).logits[0, -1], atol=1e-4, rtol=0)
