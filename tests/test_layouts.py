"""Published checkpoint layouts (Qwen2.5-Omni thinker, MiniCPM-o 4.5) equal transformers, and sessions run on them.

Each test checkpoint is a tiny random model built with transformers' own classes and written as a
checkpoint folder (config.json, safetensors, tokenizer.json) the way the published models are laid out;
`ticktock.model.load_model` loads it by layout. transformers is the oracle (fp32, atol 1e-4):

* the thinker: `Qwen2_5OmniThinkerForConditionalGeneration` on audio + text (its multimodal RoPE reduces to
  1-D RoPE for such input, shown below);
* MiniCPM-o: `Qwen3ForCausalLM` + `WhisperEncoder` composed as the published `MiniCPMO` code composes them
  (block-causal 1 s attention, `audio_projection_layer`, `AvgPool1d(audio_pool_step)`);
* Whisper's log-mel: `WhisperFeatureExtractor`.
Then every registered decoder is token-identical to `ar` in sessions on both models (protocols from the
shipped presets), and every eviction policy runs on them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

transformers = pytest.importorskip("transformers")
from safetensors.torch import load_file, save_file  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers.models.whisper.modeling_whisper import WhisperEncoder  # noqa: E402

from ticktock.audio.whisper_mel import (  # noqa: E402
    MelFloor, WhisperMelStream, normalise, unit_log10_mel, whisper_log_mel)
from ticktock.cache.policies import POLICIES, make_policy  # noqa: E402
from ticktock.decoding.draft import Draft  # noqa: E402
from ticktock.decoding.registry import DECODERS  # noqa: E402
from ticktock.engine import Engine, FastEngine, Segment  # noqa: E402
from ticktock.model.transformer import apply_rope, rope_cos_sin  # noqa: E402
from ticktock.model.io import default_dtype, load_model  # noqa: E402
from ticktock.model.layouts import detect_layout, layouts  # noqa: E402
from ticktock.protocol import PROTOCOL_FILE, PROTOCOLS_DIR, DuplexProtocol  # noqa: E402
from ticktock.session import CostModelClock, DuplexSession  # noqa: E402

from conftest import CORPUS, noise_chunks, steer_greedy  # noqa: E402

PROFILE = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[30, 30], [30, 30]], "encoder_ms": 1}
FIXED = MelFloor(fixed=-10.0, dynamic_range=None)  # a streaming log-mel that is a pure function of the signal
OMNI_SPECIALS = ["<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>", "<|IMAGE|>",
                 "<|VIDEO|>", "<|vision_bos|>", "<tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
                 "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"]
MINICPM_SPECIALS = ["<|im_start|>", "<|im_end|>", "<unit>", "</unit>", "<|listen|>", "<|speak|>", "<|chunk_eos|>",
                    "<|chunk_tts_eos|>", "<|turn_eos|>", "<|tts_bos|>", "<|tts_pad|>"]
VOCAB = 320  # the embedding table, padded past the tokenizer's ~300 ids as real checkpoints are


def make_tokenizer(specials: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 4, trainer)
    return tok


def randomise(module: nn.Module, std: float) -> None:
    """Large random weights (varied greedy choices); norm gains away from 1 so QK-norm is visible."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() > 1:
                p.normal_(0, std)
            elif name.endswith(("q_norm.weight", "k_norm.weight")):
                p.uniform_(0.5, 1.5)


# ---------------------------------------------------------------- checkpoints
@pytest.fixture(scope="module")
def omni(tmp_path_factory):
    """A thinker-only checkpoint (as `save_pretrained` writes it) and the full layout (`thinker.*` beside
    `talker.*`/`token2wav.*`, config `thinker_config`): (hf thinker, thinker dir, full dir, tokenizer)."""
    torch.manual_seed(0)
    tok = make_tokenizer(OMNI_SPECIALS)
    ids = {s: tok.token_to_id(s) for s in OMNI_SPECIALS}
    audio = dict(num_mel_bins=128, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32,
                 n_window=100, output_dim=64, max_source_positions=1500)
    vision = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=64,
                  fullatt_block_indexes=[0], patch_size=2, spatial_merge_size=1, temporal_patch_size=1, window_size=4)
    text = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, tie_word_embeddings=False,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]})
    cfg = transformers.Qwen2_5OmniThinkerConfig(
        audio_config=audio, vision_config=vision, text_config=text, audio_token_index=ids["<|AUDIO|>"],
        audio_start_token_id=ids["<|audio_bos|>"], audio_end_token_id=ids["<|audio_eos|>"],
        image_token_index=ids["<|IMAGE|>"], video_token_index=ids["<|VIDEO|>"],
        vision_start_token_id=ids["<|vision_bos|>"])
    hf = transformers.Qwen2_5OmniThinkerForConditionalGeneration(cfg).eval()
    randomise(hf.model.language_model, 0.3)
    randomise(hf.lm_head, 0.3)
    randomise(hf.model.audio_tower, 0.1)
    thinker = tmp_path_factory.mktemp("omni-thinker")
    hf.save_pretrained(thinker)
    tok.save(str(thinker / "tokenizer.json"))

    full = tmp_path_factory.mktemp("omni-full")
    state = {f"thinker.{k}": v for k, v in load_file(str(thinker / "model.safetensors")).items()}  # published names
    state |= {"talker.model.embed_tokens.weight": torch.zeros(4, 2),
              "token2wav.code_embedding.weight": torch.zeros(3, 2)}
    save_file(state, str(full / "model.safetensors"))
    (full / "config.json").write_text(json.dumps({"model_type": "qwen2_5_omni", "architectures":
                                                  ["Qwen2_5OmniModel"], "thinker_config": cfg.to_dict()}))
    tok.save(str(full / "tokenizer.json"))
    return hf, thinker, full, tok


class Projector(nn.Module):
    """The published `MultiModalProjector` (Linear -> ReLU -> Linear), names as in the checkpoint."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.linear1, self.relu, self.linear2 = nn.Linear(d_in, d_out), nn.ReLU(), nn.Linear(d_out, d_out)

    def forward(self, x):
        return self.linear2(self.relu(self.linear1(x)))


@pytest.fixture(scope="module")
def minicpm(tmp_path_factory):
    """A MiniCPM-o 4.5 layout in two shards with an index: (llm, apm, projector, dir, tokenizer)."""
    torch.manual_seed(1)
    tok = make_tokenizer(MINICPM_SPECIALS)
    qc = transformers.Qwen3Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                  num_attention_heads=4, num_key_value_heads=1, head_dim=24,  # GQA 4:1, head_dim apart
                                  tie_word_embeddings=False, max_position_embeddings=4096)
    # 200 positions: the encoder's cache is dropped (the published reset) after 3 units of 50 frames
    wc = transformers.WhisperConfig(num_mel_bins=80, d_model=32, encoder_layers=2, encoder_attention_heads=4,
                                    encoder_ffn_dim=128, max_source_positions=200)
    llm, apm = transformers.Qwen3ForCausalLM(qc).eval(), WhisperEncoder(wc).eval()
    proj = Projector(wc.encoder_ffn_dim // 4, qc.hidden_size).eval()
    randomise(llm, 0.3)
    randomise(apm, 0.1)
    randomise(proj, 0.1)
    state = {**{f"llm.{k}": v for k, v in llm.state_dict().items()},
             **{f"apm.{k}": v for k, v in apm.state_dict().items()},
             **{f"audio_projection_layer.{k}": v for k, v in proj.state_dict().items()},
             "vpm.embeddings.patch_embedding.weight": torch.zeros(4, 3), "resampler.query": torch.zeros(2, 4),
             "tts.emb_text.weight": torch.zeros(5, 2)}  # vision and TTS: in the checkpoint, never loaded
    d = tmp_path_factory.mktemp("minicpm-o")
    keys = sorted(state)
    weight_map = {}
    for i, part in enumerate((keys[: len(keys) // 2], keys[len(keys) // 2:])):
        name = f"model-{i + 1:05d}-of-00002.safetensors"
        save_file({k: state[k].contiguous() for k in part}, str(d / name))
        weight_map |= {k: name for k in part}
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    raw = {**qc.to_dict(), "model_type": "minicpmo", "architectures": ["MiniCPMO"], "audio_config": wc.to_dict(),
           "audio_pool_step": 5, "audio_chunk_length": 1.0, "vision_config": {"hidden_size": 8}}
    (d / "config.json").write_text(json.dumps(raw))
    tok.save(str(d / "tokenizer.json"))
    return llm, apm, proj, d, tok


def loaded(path, tok):
    model, _ = load_model(path)
    model.cfg.decoder.tokenizer_vocab = tok.get_vocab_size()  # as `load_runtime` does: padding ids never chosen
    return model


# ---------------------------------------------------------------- layouts and loading
def test_layouts_are_detected(omni, minicpm):
    from ticktock.model.io import DEFAULT_MODEL
    names = [lay.name for lay in layouts()]
    assert {"ticktock", "hf-decoder", "qwen2.5-omni-thinker", "minicpm-o"} <= set(names)
    raw = lambda p: json.loads((p / "config.json").read_text())  # noqa: E731
    assert detect_layout(raw(DEFAULT_MODEL)).name == "ticktock"
    assert detect_layout(raw(omni[1])).name == detect_layout(raw(omni[2])).name == "qwen2.5-omni-thinker"
    assert detect_layout(raw(minicpm[3])).name == "minicpm-o"
    assert detect_layout({"model_type": "bert"}) is None


def test_unknown_layout_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "something_else"}))
    with pytest.raises(ValueError, match="no known checkpoint layout"):
        load_model(tmp_path)


def test_only_the_duplex_parts_load(omni, minicpm):
    hf = omni[0]
    for path in omni[1:3]:
        m, tok = load_model(path)
        assert m.layout == "qwen2.5-omni-thinker" and tok is not None
        hf_params = {k: v for k, v in hf.state_dict().items() if not k.startswith("model.visual.")
                     and "audio_bos_eos_token" not in k}
        assert sum(p.numel() for p in m.parameters()) == sum(v.numel() for v in hf_params.values())
        assert not any("visual" in k or "talker" in k for k in m.state_dict())
        assert m.cfg.decoder.attention_bias and not m.cfg.decoder.qk_norm and not m.cfg.decoder.tie_word_embeddings
    m, _ = load_model(minicpm[3], dtype=torch.float16)  # two shards via the index, straight into fp16
    c = m.cfg.decoder
    assert (c.qk_norm, c.attention_bias, c.head_dim, c.num_key_value_heads) == (True, False, 24, 1)
    assert m.cfg.tower["pool_step"] == 5 and all(p.dtype == torch.float16 for p in m.parameters())
    assert not any(k.startswith(("audio.vpm", "audio.tts", "vpm", "tts")) for k in m.state_dict())
    assert default_dtype("minicpm-o", "cuda") == torch.bfloat16 and default_dtype("ticktock", "cuda") == torch.float32
    assert load_model(minicpm[3])[0].dtype == torch.float32  # CPU default


# ---------------------------------------------------------------- rotary: mrope without vision is 1-D RoPE
def test_mrope_with_equal_components_is_1d_rope(omni):
    from transformers.models.qwen2_5_omni.modeling_qwen2_5_omni import Qwen2_5OmniRotaryEmbedding
    hf, tok = omni[0], omni[3]
    text_cfg = hf.config.text_config
    rot = Qwen2_5OmniRotaryEmbedding(text_cfg)
    d = text_cfg.hidden_size // text_cfg.num_attention_heads
    pos = torch.tensor([[0, 1, 2, 7, 8, 40, 41]])
    x = torch.randn(1, 2, pos.shape[1], d)
    cos, sin = rot(x, pos[None].expand(3, -1, -1))  # three equal components (t, h, w)
    ours_cos, ours_sin = rope_cos_sin(pos, d, 10000.0, torch.float32)
    torch.testing.assert_close(cos[:, None], ours_cos, atol=1e-6, rtol=0)
    torch.testing.assert_close(sin[:, None], ours_sin, atol=1e-6, rtol=0)
    hf_rot = x * cos[:, None] + torch.cat([-x[..., d // 2:], x[..., :d // 2]], -1) * sin[:, None]
    torch.testing.assert_close(apply_rope(x, ours_cos, ours_sin), hf_rot, atol=1e-6, rtol=0)
    unequal = rot(x, torch.stack([pos, pos + 3, pos * 2]))[0]  # a vision grid would differ
    assert (unequal[:, None] - ours_cos).abs().max() > 1e-2
    # and the thinker gives audio + text input exactly such positions: 0..T-1 in all three components
    a, b, e = (tok.token_to_id(s) for s in ("<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>"))
    ids = torch.tensor([[5, 6, a, *[b] * 25, e, 7]])
    p3, _ = hf.model.get_rope_index(ids, None, None, torch.ones_like(ids), False, torch.tensor([100]), None)
    assert all(torch.equal(p3[i, 0], torch.arange(ids.shape[1])) for i in range(3))


# ---------------------------------------------------------------- log-mel
@pytest.mark.parametrize("n_mels", [80, 128])
def test_whisper_log_mel_equals_feature_extractor(n_mels):
    fe = transformers.WhisperFeatureExtractor(feature_size=n_mels)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(48000) * 0.1).astype(np.float32)
    x[16000:20000] *= 8  # a loud stretch: the clip's max sets the floor
    ref = fe(x, sampling_rate=16000, return_tensors="np", padding=False).input_features[0].T
    assert np.abs(whisper_log_mel(x, n_mels).numpy() - ref).max() < 1e-5
    for lookahead in (0, 1):  # streaming: Whisper's frames of the signal delayed by 40 + 160 L samples
        delayed = np.concatenate([np.zeros(40 + 160 * lookahead, np.float32), x])
        ref = fe(delayed, sampling_rate=16000, return_tensors="np", padding=False).input_features[0].T
        floor = 4 * ref.max() - 4 - 8  # the extractor's clip-wide floor, given to the unit function
        units = [normalise(unit_log10_mel(x[i:i + 16000], x[:i], n_mels, lookahead), floor)[:100]
                 for i in (0, 16000, 32000)]
        got = torch.cat(units).numpy()
        assert np.abs(got[2:] - ref[2:300]).max() < 1e-5  # frames 0-1: Whisper reflect-pads, a stream has silence


def test_mel_stream_floor_rules():
    x = (np.random.default_rng(3).standard_normal(16000) * 0.2).astype(np.float32)
    x[8000:] = 0  # digital silence: the floor binds
    fixed = WhisperMelStream(80, 16000, 0, FIXED)
    assert fixed.features(x, commit=False).min() >= (-10 + 4) / 4 - 1e-6
    dyn = WhisperMelStream(80, 16000, 0, MelFloor(dynamic_range=8.0))
    f = dyn.features(x)
    assert abs(float(f.min()) - (float(f.max()) - 2)) < 1e-5  # floor max - 8 (log10): 2 below the max once scaled
    minicpm = WhisperMelStream(80, 16000, 1, MelFloor(-10.0, 8.0, 5.0, 30.0))
    assert minicpm.features(x).shape == (101, 80)


# ---------------------------------------------------------------- logits equal transformers
def test_thinker_logits_equal_transformers(omni):
    hf, path, _, tok = omni
    ours = loaded(path, tok)
    ids = {s: tok.token_to_id(s) for s in OMNI_SPECIALS}
    x = (np.random.default_rng(1).standard_normal(32000) * 0.1).astype(np.float32)
    mel = transformers.WhisperFeatureExtractor(feature_size=128)(x, sampling_rate=16000, return_tensors="pt",
                                                                 padding=False).input_features  # (1, 128, 200)
    pre, post = tok.encode("what is the capital").ids, tok.encode(" paris").ids
    seq = pre + [ids["<|audio_bos|>"]] + [ids["<|AUDIO|>"]] * 50 + [ids["<|audio_eos|>"]] + post
    with torch.no_grad():
        ref = hf(input_ids=torch.tensor([seq]), input_features=mel,
                 feature_attention_mask=torch.ones(1, 200, dtype=torch.long)).logits[0]
        audio = ours.audio.encode_window(mel[0].T)  # one 2 s window, as the tower encodes it
        eng = Engine(ours, 128)
        got = eng.forward([Segment(torch.tensor(pre + [ids["<|audio_bos|>"]]), [0] * (len(pre) + 1)),
                           Segment(audio, [2] * 50),
                           Segment(torch.tensor([ids["<|audio_eos|>"]] + post), [4] * (1 + len(post)))],
                          unit=0, draft=Draft([3, 4], [-1, 0]))
        full = ours.lm.logits(ours.lm(ours.embed_segments([torch.tensor(pre + [ids["<|audio_bos|>"]]), audio,
                                                            torch.tensor([ids["<|audio_eos|>"]] + post)]),
                                      torch.arange(len(seq))[None]))[0]
    n = tok.get_vocab_size()  # ids past the tokenizer are masked (-inf) by `Transformer.logits`
    torch.testing.assert_close(full[:, :n], ref[:, :n], atol=1e-4, rtol=0)
    torch.testing.assert_close(got[0, :n], ref[-1, :n], atol=1e-4, rtol=0)  # through the engine and its KV cache


def test_thinker_stream_is_the_encoding_of_audio_heard_so_far(omni):
    """Unit u's 25 embeddings = HF's audio tower on all log-mel so far (its 2 s windows), restricted to u."""
    hf, path, _, tok = omni
    ours = loaded(path, tok)
    x = (np.random.default_rng(2).standard_normal(16000 * 5) * 0.1).astype(np.float32)
    stream = ours.audio.streaming(16000)
    stream.mel.floor = FIXED
    mels = WhisperMelStream(128, 16000, 0, FIXED)
    frames = []
    with torch.no_grad():
        for u in range(5):
            chunk = x[16000 * u:16000 * (u + 1)]
            sil = stream.silence_hypothesis()
            got = stream.push(chunk)
            frames.append(mels.features(chunk))
            heard = torch.cat(frames)
            ref = hf.model.audio_tower(heard.T, feature_lens=torch.tensor([heard.shape[0]])).last_hidden_state
            assert got.shape == (25, 64)
            torch.testing.assert_close(got, ref[-25:], atol=1e-5, rtol=0)
            assert not torch.allclose(sil, got, atol=1e-3)  # the silence hypothesis is another input


def minicpm_oracle(apm, proj, mel: torch.Tensor, units: int, pool: int = 5) -> torch.Tensor:
    """The published MiniCPMWhisperEncoder forward (conv stem, positions, layers under the block-causal 1 s
    mask, final LayerNorm), then `audio_projection_layer` and AvgPool1d, over a whole stream's log-mel,
    with the encoder context dropped where the streaming code drops it."""
    gelu = nn.functional.gelu
    h = gelu(apm.conv2(gelu(apm.conv1(mel.T[None])))).transpose(1, 2)[:, :50 * units]
    n_pos = apm.embed_positions.weight.shape[0]
    starts, n = [], 0
    for u in range(units):
        if n + 50 >= n_pos:
            n = 0
        starts.append(u - n // 50)
        n += 50
    out = []
    for s in sorted(set(starts)):
        us = [u for u in range(units) if starts[u] == s]
        x = h[:, 50 * us[0]:50 * (us[-1] + 1)]
        x = x + apm.embed_positions.weight[:x.shape[1]]
        blk = torch.arange(x.shape[1]) // 50
        mask = torch.where(blk[None, :] <= blk[:, None], 0.0, float("-inf"))[None, None]
        for layer in apm.layers:
            x = layer(x, mask)
        x = proj(apm.layer_norm(x))
        out.append(nn.AvgPool1d(pool, pool)(x.transpose(1, 2)).transpose(1, 2)[0])
    return torch.cat(out)


def test_minicpm_logits_equal_transformers(minicpm):
    llm, apm, proj, path, tok = minicpm
    ours = loaded(path, tok)
    p = DuplexProtocol.from_file(tok, "minicpm-o-4.5-duplex")
    units = 5
    x = (np.random.default_rng(4).standard_normal(16000 * units) * 0.1).astype(np.float32)
    stream = ours.audio.streaming(16000)
    stream.mel.floor = FIXED
    mels = WhisperMelStream(80, 16000, 1, FIXED)
    with torch.no_grad():
        got_audio, feats = [], []
        for u in range(units):
            got_audio.append(stream.push(x[16000 * u:16000 * (u + 1)]))
            feats.append(mels.features(x[16000 * u:16000 * (u + 1)]))
        mel = torch.cat([f[:100] for f in feats] + [feats[-1][100:]])  # the stream's frames, offline
        ref_audio = minicpm_oracle(apm, proj, mel, units)
        torch.testing.assert_close(torch.cat(got_audio), ref_audio, atol=1e-5, rtol=0)  # includes a cache reset

        # the LM over prefix, two units (audio + outputs), as the duplex format lays them out
        speak = [p.id("speak"), *p.encode("the capital is paris"), p.id("chunk_eos")]
        segs = [torch.tensor(p.prefix_ids("You are a helpful voice assistant.") + p.unit_open_ids(0)), ref_audio[:10],
                torch.tensor(speak + p.unit_open_ids(1)), ref_audio[10:20], torch.tensor([p.id("listen")])]
        emb = ours.embed_segments(segs)
        ref = llm(inputs_embeds=emb).logits[0]
        got = ours.lm.logits(ours.lm(emb, torch.arange(emb.shape[1])[None]))[0]
    n = tok.get_vocab_size()  # ids past the tokenizer are masked (-inf) by `Transformer.logits`
    torch.testing.assert_close(got[:, :n], ref[:, :n], atol=1e-4, rtol=0)


def test_fast_engine_static_path_on_minicpm(minicpm):
    """QK-norm, head_dim apart from the width, GQA 4:1: the static path equals the eager engine."""
    ours = loaded(minicpm[3], minicpm[4])
    eager, fast = Engine(ours, 256), FastEngine(ours, 256, mode="static")
    g = torch.Generator().manual_seed(0)
    audio = torch.randn(10, 64, generator=g)
    for segs in ([Segment(torch.randint(0, 300, (13,), generator=g), [0] * 13)],
                 [Segment(torch.tensor([5]), [1]), Segment(audio, [2] * 10)],
                 [Segment(torch.tensor([9]), [4])]):
        draft = Draft([3, 4, 5], [-1, 0, -1])
        a, b = eager.forward(segs, unit=0, draft=draft), fast.forward(segs, unit=0, draft=draft)
        torch.testing.assert_close(b, a, atol=1e-4, rtol=0)
    assert fast.fast_forwards == 3


# ---------------------------------------------------------------- GQA of any ratio, explicit head_dim
@pytest.mark.parametrize("heads,kv,head_dim", [(4, 4, None), (4, 2, 24), (8, 1, 8), (6, 3, 16)])
def test_qwen3_checkpoints_equal_transformers(tmp_path, heads, kv, head_dim):
    torch.manual_seed(heads * 10 + kv)
    cfg = transformers.Qwen3Config(vocab_size=200, hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                                   num_attention_heads=heads, num_key_value_heads=kv, head_dim=head_dim or 48 // heads,
                                   tie_word_embeddings=kv == heads)
    hf = transformers.Qwen3ForCausalLM(cfg).eval()
    randomise(hf, 0.2)
    hf.save_pretrained(tmp_path)
    ours, _ = load_model(tmp_path)
    c = ours.cfg.decoder
    assert ours.layout == "hf-decoder" and c.qk_norm and c.head_dim == (head_dim or 48 // heads)
    ids = torch.randint(0, 200, (1, 20))
    with torch.no_grad():
        ref = hf(ids).logits[0]
        got = ours.lm.logits(ours.lm(ours.lm.embed(ids), torch.arange(20)[None]))[0]
    torch.testing.assert_close(got, ref, atol=1e-4, rtol=0)


# ---------------------------------------------------------------- protocol files
def test_protocol_presets_map_onto_the_model_tokens(omni, minicpm):
    p = DuplexProtocol.from_file(minicpm[4], "minicpm-o-4.5-duplex")
    tok = minicpm[4]
    assert p.unit_open_ids(0) == [tok.token_to_id("<unit>")]
    assert p.unit_open_ids(3) == [tok.token_to_id("</unit>"), tok.token_to_id("<unit>")]
    out = p.output_ids(p.parse([p.id("speak")]).decision or 1, "the capital is paris", turn_end=True)
    assert out[-2:] == [p.id("turn_eos"), p.id("chunk_eos")]
    assert not p.is_unit_end(p.id("turn_eos"), 3) and p.is_unit_end(tok.token_to_id("<|chunk_tts_eos|>"), 3)
    parsed = p.parse(out)
    assert (parsed.decision.name, parsed.text, parsed.terminator) == ("SPEAK", "the capital is paris", "turn_eos")
    assert p.prefix_ids("hi")[:1] == [tok.token_to_id("<|im_start|>")] and p.audio_per_chunk == 10
    assert not p.has("tool") and not p.has("asr_start")
    with pytest.raises(KeyError, match="maps no tool_result"):
        p.tool_result_ids("sunny")
    q = DuplexProtocol.from_file(omni[3], "qwen2.5-omni-thinker")
    assert q.audio_close_ids() == [omni[3].token_to_id("<|audio_eos|>")] and q.audio_per_chunk == 25
    assert q.unit_open_ids(2) == [omni[3].token_to_id("<|audio_bos|>")]
    with pytest.raises(FileNotFoundError, match="shipped presets"):
        DuplexProtocol.from_file(tok, "no-such-preset")
    with pytest.raises(ValueError, match="lacks the special token"):
        DuplexProtocol.from_file(omni[3], "minicpm-o-4.5-duplex")  # the thinker's tokenizer has no <unit>


# ---------------------------------------------------------------- sessions: decoders and eviction
def session_setup(which, omni, minicpm):
    """A loaded model steered (`conftest.steer_greedy`) so its random greedy choices take decisions and end
    units often, its protocol from the shipped preset, and tool results where the protocol has tool tokens."""
    shares = {"speak": 0.3, "listen": 0.3, "chunk_eos": 0.15, "turn_eos": 0.05}
    if which == "minicpm-o":
        model = loaded(minicpm[3], minicpm[4])
        proto = DuplexProtocol.from_file(minicpm[4], "minicpm-o-4.5-duplex")
        return steer_greedy(model, proto, shares, seed=2), proto, None
    model = loaded(omni[1], omni[3])
    proto = DuplexProtocol.from_file(omni[3], "qwen2.5-omni-thinker")
    return steer_greedy(model, proto, shares | {"tool": 0.05}, seed=2), proto, {2: "flight JL123 at 9:40"}


@pytest.fixture(scope="module")
def ar_runs(omni, minicpm):
    out = {}
    for which in ("minicpm-o", "qwen2.5-omni-thinker"):
        model, proto, tools = session_setup(which, omni, minicpm)
        chunks = noise_chunks(8, 3, speech_units=(1, 2, 5))
        res = DuplexSession(model, proto, "ar", clock=CostModelClock(PROFILE)).run(chunks, tools)
        out[which] = (model, proto, tools, chunks, res)
    return out


@pytest.mark.parametrize("name", sorted(DECODERS))
@pytest.mark.parametrize("which", ["minicpm-o", "qwen2.5-omni-thinker"])
def test_decoders_token_identical_to_ar(ar_runs, which, name):
    model, proto, tools, chunks, ar = ar_runs[which]
    got = DuplexSession(model, proto, name, clock=CostModelClock(PROFILE)).run(chunks, tools)
    assert [r.tokens for r in got] == [r.tokens for r in ar]
    for a, g in zip(ar, got):
        assert g.forwards <= a.forwards, f"unit {a.index}: {name} used more post-audio forwards than ar"
    assert sum(len(r.tokens) for r in ar) > len(ar)  # units are not all a lone decision
    assert {r.decision for r in ar} >= {"listen", "speak"} and any(r.terminator for r in ar)


EVICT_CHUNKS = noise_chunks(8, 5, speech_units=(1, 2, 5))


@pytest.fixture(scope="module")
def no_eviction(ar_runs):
    return {which: DuplexSession(m, p, "ar", clock=CostModelClock(PROFILE)).run(EVICT_CHUNKS, tools)
            for which, (m, p, tools, _, _) in ar_runs.items()}


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("which", ["minicpm-o", "qwen2.5-omni-thinker"])
def test_eviction_policies_run(ar_runs, no_eviction, which, policy):
    model, proto, tools, _, _ = ar_runs[which]
    budget = 120
    res = DuplexSession(model, proto, "ar", clock=CostModelClock(PROFILE),
                        policy=make_policy(policy, budget=budget)).run(EVICT_CHUNKS, tools)
    base = no_eviction[which]
    assert len(res) == len(EVICT_CHUNKS)
    if policy == "none":
        assert [r.resident_slots for r in res] == [r.resident_slots for r in base]
    else:
        assert res[-1].resident_slots < base[-1].resident_slots  # it evicted
    if policy == "streaming_llm":
        assert max(r.resident_slots for r in res) <= budget
    if policy == "unit_drop":  # the unit that just ended is never dropped
        unit = 3 + proto.audio_per_chunk + proto.max_unit_tokens + 16  # markers, audio, outputs, a tool result
        assert max(r.resident_slots for r in res) <= budget + unit


def test_sessions_lay_units_out_as_the_protocol_says(ar_runs):
    model, p, tools, chunks, _ = ar_runs["minicpm-o"]
    sess = DuplexSession(model, p, "ar", clock=CostModelClock(PROFILE))
    sess.run(chunks[:3])
    h = sess.committed.history
    assert h.count(p.id("unit")) == 3 and h.count(p.id("unit_end")) == 2  # `</unit>` closes every unit but the open one
    assert all(h[i + 1] == p.id("unit") for i, t in enumerate(h) if t == p.id("unit_end"))
    model, q, tools, chunks, _ = ar_runs["qwen2.5-omni-thinker"]
    sess = DuplexSession(model, q, "ar", clock=CostModelClock(PROFILE), engine="eager")
    sess.run(chunks[:2])
    c = sess.engine.cache
    kinds, n = c.kind[:c.length].tolist(), c.length
    assert kinds.count(2) == 2 * q.audio_per_chunk  # 25 audio slots per 1 s unit
    audio_ends = [i for i in range(1, n) if kinds[i - 1] == 2 and kinds[i] != 2]
    assert len(audio_ends) == 2 and all(kinds[i] == 1 for i in audio_ends)  # <|audio_eos|> right after the audio


def test_runtime_loads_a_layout_with_its_protocol(omni, minicpm, tmp_path):
    import shutil

    from ticktock.runtime import load_runtime
    rt = load_runtime(minicpm[3])
    assert rt.protocol.name == "minicpm-o-4.5-duplex" and rt.model.layout == "minicpm-o" and rt.trained
    assert rt.model.cfg.decoder.tokenizer_vocab == minicpm[4].get_vocab_size()
    assert load_runtime(omni[2], dtype=torch.float16).model.dtype == torch.float16
    # a protocol file beside the checkpoint wins over the layout's preset
    d = tmp_path / "mine"
    shutil.copytree(minicpm[3], d)
    spec = json.loads((PROTOCOLS_DIR / "minicpm-o-4.5-duplex.json").read_text())
    spec |= {"name": "mine", "max_unit_tokens": 40}
    (d / PROTOCOL_FILE).write_text(json.dumps(spec))
    assert load_runtime(d).protocol.name == "mine"


# (preset, LM parameters, audio tower parameters): Qwen2.5-7B + the thinker's 32-layer audio encoder (640 M);
# Qwen3-8B + Whisper-medium's encoder (307 M) with MiniCPM-o's projection (21 M)
@pytest.mark.parametrize("shape,lm_b,tower_m", [("qwen2.5-omni-7b-thinker", 7.6, 640), ("minicpm-o-4.5", 8.2, 328)])
def test_full_size_presets(shape, lm_b, tower_m):
    """`--shape` presets hold the decoder and the audio tower; built on the meta device (no memory)."""
    from ticktock.model import DuplexLM, preset
    cfg = preset(shape)
    with torch.device("meta"):
        m = DuplexLM(cfg)
    lm = sum(p.numel() for p in m.lm.parameters())
    tower = sum(p.numel() for p in m.audio.parameters())
    assert abs(lm / 1e9 - lm_b) < 0.1 and abs(tower / 1e6 - tower_m) < 2, (lm, tower)
    assert m.cfg.to_dict()["tower"] == cfg.tower
