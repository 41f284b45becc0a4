"""HF config.json fields -> `DecoderConfig`, shared by the layouts of HF-style decoders (Qwen2/Qwen3/Llama)."""

from __future__ import annotations

from ..config import DecoderConfig

_FIELDS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
           "num_key_value_heads", "rms_norm_eps", "max_position_embeddings")


def rope_theta(d: dict) -> float:
    """RoPE base from an HF text config (`rope_theta`, or transformers 5's `rope_parameters`); refuses scaled
    variants (YaRN, Llama-3, ...), which this decoder does not implement. Qwen2.5-Omni's multimodal RoPE
    (`mrope_section`) is accepted: with no image or video in the input its three position components are
    equal and it is the 1-D RoPE (tests/test_layouts.py)."""
    params = d.get("rope_parameters") or d.get("rope_scaling") or {}
    kind = params.get("rope_type", params.get("type", "default"))
    if kind not in ("default", "mrope"):
        raise ValueError(f"RoPE type {kind!r} is not supported (only the plain and the multimodal 1-D case)")
    theta = d.get("rope_theta", params.get("rope_theta"))
    return float(theta) if theta is not None else 10000.0


def decoder_config(d: dict, keys: set[str], prefix: str) -> DecoderConfig:
    """`d`: the text model's HF config; `keys`: the checkpoint's tensor names, whose decoder part starts
    with `prefix` + "model." / "lm_head." (biases, QK-norm and tied embeddings are read from what is stored)."""
    missing = [f for f in _FIELDS[:5] if f not in d]
    if missing:
        raise ValueError(f"the decoder config lacks {missing}")
    if d.get("hidden_act", "silu") != "silu" or d.get("mlp_bias"):
        raise ValueError(f"MLP {d.get('hidden_act')!r}{' with biases' if d.get('mlp_bias') else ''} is not supported "
                         "(SwiGLU without biases only)")
    if d.get("use_sliding_window") or "sliding_attention" in (d.get("layer_types") or []):
        raise ValueError("sliding-window attention layers are not supported")
    cfg = DecoderConfig(**{k: d[k] for k in _FIELDS if d.get(k) is not None})
    if d.get("num_key_value_heads") is None:
        cfg.num_key_value_heads = cfg.num_attention_heads
    cfg.rope_theta = rope_theta(d)
    layer0 = f"{prefix}model.layers.0.self_attn."
    cfg.attention_bias = f"{layer0}q_proj.bias" in keys
    cfg.qk_norm = f"{layer0}q_norm.weight" in keys
    cfg.tie_word_embeddings = f"{prefix}lm_head.weight" not in keys
    head_dim = d.get("head_dim")
    if head_dim and head_dim != cfg.hidden_size // cfg.num_attention_heads:
        cfg.explicit_head_dim = int(head_dim)
    return cfg


def rename_decoder(key: str, prefix: str) -> str | None:
    """`<prefix>model.*` / `<prefix>lm_head.*` -> `lm.model.*` / `lm.lm_head.*`; anything else None."""
    if not key.startswith(prefix):
        return None
    rest = key[len(prefix):]
    if rest.startswith(("model.", "lm_head.")) and not rest.endswith("rotary_emb.inv_freq"):
        return "lm." + rest
    return None
