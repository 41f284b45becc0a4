"""`model.expand`: the shipped model in a larger decoder shape computes the same logits and the same sessions,
padded vocabulary ids are never produced, and impossible targets are refused (CPU, fp32)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest
import torch

from ticktock.audio import load_audio, split_chunks
from ticktock.cli import main
from ticktock.decoding.draft import Draft
from ticktock.decoding.registry import DECODERS
from ticktock.engine import Engine, Segment
from ticktock.model import DEFAULT_MODEL, DecoderConfig, ModelConfig, load_model, preset
from ticktock.model.expand import expand_model, head_dims
from ticktock.protocol import DuplexProtocol
from ticktock.runtime import load_runtime
from ticktock.session import CostModelClock, DuplexSession

pytestmark = pytest.mark.skipif(not (DEFAULT_MODEL / "model.safetensors").exists(), reason="no shipped model")
PROFILE = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[8, 12], [8, 12]], "encoder_ms": 2}
EXAMPLE = DEFAULT_MODEL.parent / "examples" / "qa.wav"
# Twice the width, 128-dim heads two to a KV group (the other query head of each group is zeroed),
# twice the layers, the vocabulary padded, embeddings untied.
WIDE = DecoderConfig(vocab_size=2304, hidden_size=1280, intermediate_size=1280, num_hidden_layers=12,
                     num_attention_heads=10, num_key_value_heads=5, tie_word_embeddings=False)
# Cheaper for whole sessions: 128-dim heads, one more layer, wider MLP, padded vocabulary, tied.
NARROW = DecoderConfig(vocab_size=2304, hidden_size=640, intermediate_size=1280, num_hidden_layers=7,
                       num_attention_heads=5, num_key_value_heads=5)


@pytest.fixture(scope="module")
def source():
    model, tok = load_model()
    return model, DuplexProtocol(tok)


@pytest.fixture(scope="module")
def wide(source):
    return expand_model(source[0], WIDE)


@pytest.fixture(scope="module")
def narrow(source):
    return expand_model(source[0], NARROW)


def mixed_logits(model) -> torch.Tensor:
    """Logits (rows, V) of a forward over text ids + the encoder's audio embeddings + more ids, then a draft tree."""
    g = torch.Generator().manual_seed(0)
    mel, context = torch.randn(100, 80, generator=g), torch.randn(100, 80, generator=g)
    ids = torch.randint(0, 2100, (24,), generator=g)
    eng = Engine(model)
    first = eng.forward([Segment(ids[:12], [0] * 12), Segment(model.encode_audio(mel, context), [1] * 10),
                         Segment(ids[12:20], [0] * 8)], unit=0)
    tree = eng.forward([Segment(ids[20:], [0] * 4)], unit=1, draft=Draft([5, 6, 7], [-1, 0, 0]))
    return torch.cat([first, tree])


def test_expanded_config(wide):
    c = wide.cfg.decoder
    assert (c.hidden_size, c.head_dim, c.num_hidden_layers, c.vocab_size) == (1280, 128, 12, 2304)
    assert c.tokenizer_vocab == 2100 and c.rms_norm_eps == pytest.approx(1e-6 * 320 / 1280)
    assert wide.lm.lm_head.weight is not wide.lm.model.embed_tokens.weight  # untied, a copy
    assert head_dims(64, 128).tolist()[:3] == [0, 2, 4] and head_dims(64, 128).tolist()[32:34] == [64, 66]


@pytest.mark.parametrize("shape", ["wide", "narrow"])
def test_same_logits_on_a_mixed_forward(source, wide, narrow, shape):
    big = {"wide": wide, "narrow": narrow}[shape]
    want, got = mixed_logits(source[0]), mixed_logits(big)
    assert got.shape == (want.shape[0], 2304)
    diff = (got[:, :2100] - want).abs().max().item()
    assert diff < 1e-4, f"max |logit diff| {diff:.2e}"
    assert torch.isneginf(got[:, 2100:]).all()


@pytest.fixture(scope="module")
def example():
    return split_chunks(load_audio(EXAMPLE))[:8], json.loads(EXAMPLE.with_suffix(".json").read_text())["system"]


@pytest.fixture(scope="module")
def source_ar(source, example) -> list[list[int]]:
    (model, protocol), (chunks, system) = source, example
    ar = DuplexSession(model, protocol, "ar", clock=CostModelClock(PROFILE), system=system).run(chunks)
    return [r.tokens for r in ar]


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_sessions_are_token_identical(source, narrow, example, source_ar, name):
    """Every decoder on the expanded model commits the source's `ar` tokens (over the shipped qa example)."""
    chunks, system = example
    got = DuplexSession(narrow, source[1], name, clock=CostModelClock(PROFILE), system=system).run(chunks)
    assert [r.tokens for r in got] == source_ar
    assert sum(len(t) for t in source_ar) > len(source_ar)  # the example makes it speak


def test_padded_ids_are_never_produced(source, narrow, example):
    """Padded rows made to win every argmax: masked, so no logit row and no session ever picks one."""
    model, protocol = source
    big = copy.deepcopy(narrow)
    with torch.no_grad():
        big.lm.lm_head.weight[2100:] = torch.randn(204, 640) * 100  # tied: the embedding rows too, never fed
    z = mixed_logits(big)
    assert (z.argmax(-1) < 2100).all()
    big.cfg.decoder.tokenizer_vocab = None  # without the mask the padding would win
    assert (mixed_logits(big).argmax(-1) >= 2100).any()
    big.cfg.decoder.tokenizer_vocab = 2100
    res = DuplexSession(big, protocol, "sl", clock=CostModelClock(PROFILE)).run(example[0][:4])
    assert all(t < 2100 for r in res for t in r.tokens)


def test_logits_read_only_the_tokenizer_rows(narrow):
    """The head's real rows give the full head's logits; padding columns are -inf and get no gradient."""
    lm = copy.deepcopy(narrow).lm
    hidden = torch.randn(3, lm.lm_head.weight.shape[1], requires_grad=True)
    full = lm.lm_head(hidden).float()
    z = lm.logits(hidden)
    assert z.shape == full.shape and torch.isinf(z[:, 2100:]).all()
    torch.testing.assert_close(z[:, :2100], full[:, :2100], rtol=1e-5, atol=1e-5)
    z[:, :2100].logsumexp(-1).sum().backward()
    g = lm.lm_head.weight.grad
    assert g[:2100].abs().sum() > 0 and (g[2100:] == 0).all()


@pytest.mark.parametrize("change, message", [
    (dict(num_hidden_layers=4), "num_hidden_layers 4 <"),
    (dict(hidden_size=256, num_attention_heads=2, num_key_value_heads=2), "hidden_size 256 <"),
    (dict(intermediate_size=512), "intermediate_size 512 <"),
    (dict(vocab_size=2000), "vocab_size 2000 <"),
    (dict(hidden_size=1024, num_attention_heads=8, num_key_value_heads=4), "4 KV groups < the source's 5"),
    (dict(num_attention_heads=10, num_key_value_heads=4), "do not split into 4 KV groups"),
    (dict(hidden_size=960, num_attention_heads=10, num_key_value_heads=5), "head_dim 96 is not a multiple"),
    (dict(attention_bias=False), "biases"),
])
def test_impossible_targets_are_refused(source, change, message):
    with pytest.raises(ValueError, match=message):
        expand_model(source[0], replace(NARROW, **change))


def test_group_size_and_tying_are_checked(wide):
    """The wide model has two query heads per KV group and untied embeddings: a target must keep both."""
    with pytest.raises(ValueError, match="query heads per KV group"):
        expand_model(wide, replace(WIDE, num_key_value_heads=10))
    with pytest.raises(ValueError, match="ties its embeddings"):
        expand_model(wide, replace(WIDE, tie_word_embeddings=True))


def test_an_attached_adapter_is_refused(source):
    model = copy.deepcopy(source[0])
    q = model.lm.model.layers[0].self_attn.q_proj
    q.register_parameter("lora_A", torch.nn.Parameter(torch.zeros(2, q.in_features)))  # an unmerged LoRA weight
    with pytest.raises(ValueError, match="extra parameters"):
        expand_model(model, NARROW)


def test_config_round_trip():
    cfg = ModelConfig(replace(preset("tiny-wide").decoder, tokenizer_vocab=2100), None)
    assert ModelConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    old = cfg.to_dict()
    del old["decoder"]["tokenizer_vocab"]  # configs written before the field
    assert ModelConfig.from_dict(old).decoder.tokenizer_vocab is None


def test_cli_writes_a_loadable_folder(source, tmp_path):
    out = tmp_path / "wide"
    assert main(["model", "expand", "--shape", "tiny-wide", "--out", str(out), "--device", "cpu"]) == 0
    assert {p.name for p in out.iterdir()} == {"config.json", "model.safetensors", "tokenizer.json"}
    rt = load_runtime(out)
    c = rt.model.cfg.decoder
    assert (c.hidden_size, c.vocab_size, c.tokenizer_vocab) == (640, 2304, 2100)
    assert (mixed_logits(rt.model)[:, :2100] - mixed_logits(source[0])).abs().max() < 1e-4
    # the shipped side channel (a whole decoder) is expanded beside it and loads onto the expansion
    side = load_runtime(out, side_channel=True).model
    shipped = load_runtime(None, side_channel=True).model
    assert (mixed_logits(side)[:, :2100] - mixed_logits(shipped)).abs().max() < 1e-4
    assert (mixed_logits(side)[:, :2100] - mixed_logits(rt.model)[:, :2100]).abs().max() > 1e-3  # its own weights
    # A padded table whose config predates the field: the runtime masks past the tokenizer.
    raw = json.loads((out / "config.json").read_text())
    del raw["ticktock"]["decoder"]["tokenizer_vocab"]
    (out / "config.json").write_text(json.dumps(raw))
    assert load_runtime(out).model.cfg.decoder.tokenizer_vocab == 2100


def test_a_side_channel_with_its_own_encoder_expands_whole(tmp_path):
    """A side channel kept with the encoder it was fitted on, beside a retrained base (another encoder), expands
    with that encoder: the expansion's side channel computes what the source's does."""
    import shutil

    from safetensors.torch import load_file, save_file

    from ticktock.model.adapter import ADAPTER_SUFFIX, adapter_for

    shipped_side = adapter_for(DEFAULT_MODEL)
    if shipped_side is None or not (shipped_side / "model.safetensors").is_file():
        pytest.skip("the shipped side channel does not keep its own encoder")
    base = tmp_path / "m"
    shutil.copytree(DEFAULT_MODEL, base)
    state = load_file(str(base / "model.safetensors"))
    g = torch.Generator().manual_seed(1)
    retrained = {k: v + 0.05 * torch.randn(v.shape, generator=g).to(v.dtype) if k.startswith("audio.") else v
                 for k, v in state.items()}
    save_file(retrained, str(base / "model.safetensors"))
    shutil.copytree(shipped_side, tmp_path / f"m{ADAPTER_SUFFIX}")  # beside the retrained copy, as shipped
    out = tmp_path / "wide"
    assert main(["model", "expand", "--model", str(base), "--shape", "tiny-wide", "--out", str(out),
                 "--device", "cpu"]) == 0
    assert (out.parent / f"wide{ADAPTER_SUFFIX}" / "model.safetensors").is_file()
    side = load_runtime(out, side_channel=True).model
    source_side = load_runtime(base, side_channel=True).model
    assert (mixed_logits(side)[:, :2100] - mixed_logits(source_side)).abs().max() < 1e-4
    assert (mixed_logits(source_side) - mixed_logits(load_runtime(None, side_channel=True).model)).abs().max() < 1e-4
