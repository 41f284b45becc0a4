"""Function-preserving expansion of a trained `DuplexLM` into a larger decoder shape.

The expanded model computes the source's logits (up to float rounding) while each forward costs what the
large shape costs, so a GPU benchmark of an 8B-class forward runs on a trained model's tokens.
Zero padding in the spirit of Net2Net (Chen et al., 2016), made exact by five facts:

* widths (hidden, MLP, vocabulary) are zero-padded, so the padded residual dims stay exactly 0;
* RMSNorm averages over the padded width: gains x sqrt(d/D) and eps x d/D give back the small norm;
* a head of size d sits in a head of size D = m d with its rotary pairs (j, j + d/2) at (m j, m j + D/2),
  which rotate at the same frequencies under the same theta; q x sqrt(D/d) restores the 1/sqrt(d) softmax
  scale. Each source KV head keeps a KV group of its own, its query heads on the group's first slots; the
  other query heads are zero and `o_proj` drops their outputs (zero columns);
* extra layers are identities (all zero, so `o_proj` and `down_proj` add nothing to the residual);
* padded vocabulary ids get zero rows and are masked by `tokenizer_vocab` (`Transformer.logits`).

The audio encoder is kept as it is; only its output projection is zero-padded to the new width.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace
from typing import Callable

import torch
from torch import nn

from .config import DecoderConfig, ModelConfig
from .transformer import Block
from .duplex import DuplexLM


def fit_problems(src: DecoderConfig, target: DecoderConfig) -> list[str]:
    """Why `target` cannot hold `src` exactly; empty when it can."""
    out = []
    for field in ("num_hidden_layers", "hidden_size", "intermediate_size", "vocab_size"):
        if getattr(target, field) < getattr(src, field):
            out.append(f"{field} {getattr(target, field)} < the source's {getattr(src, field)}")
    if target.num_attention_heads % target.num_key_value_heads:
        out.append(f"{target.num_attention_heads} query heads do not split into {target.num_key_value_heads} KV groups")
    elif target.num_key_value_heads < src.num_key_value_heads:
        out.append(f"{target.num_key_value_heads} KV groups < the source's {src.num_key_value_heads} KV heads "
                   "(each source KV head needs a group of its own)")
    elif _group(target) < _group(src):
        out.append(f"{_group(target)} query heads per KV group < the source's {_group(src)}")
    if target.head_dim * target.num_attention_heads != target.hidden_size:
        out.append(f"hidden_size {target.hidden_size} is not a multiple of {target.num_attention_heads} heads")
    if target.head_dim % src.head_dim or src.head_dim % 2:
        out.append(f"head_dim {target.head_dim} is not a multiple of the source's {src.head_dim}")
    if src.qk_norm or target.qk_norm:  # a per-head RMSNorm cannot be padded into the identity
        out.append("QK-norm (Qwen3) cannot be expanded exactly; use a target without it (minicpm-o-4.5-lm)")
    if src.attention_bias and not target.attention_bias:
        out.append("the source has q/k/v biases and the target none (set attention_bias)")
    if target.tie_word_embeddings and not src.tie_word_embeddings:
        out.append("the target ties its embeddings and the source does not")
    return out


def expanded_config(src: DecoderConfig, target: DecoderConfig) -> DecoderConfig:
    """`target`'s shape, with what exactness needs: the source's RoPE theta, eps x d/D, the tokenizer mask.

    RoPE theta does not change a forward's cost; the target's own theta would rotate the source's
    pairs at other frequencies, so the source's is kept.
    """
    problems = fit_problems(src, target)
    if problems:
        raise ValueError("the target shape cannot hold the source model: " + "; ".join(problems))
    real = src.tokenizer_vocab if src.tokenizer_vocab is not None else src.vocab_size
    return replace(target, rope_theta=src.rope_theta, tokenizer_vocab=real,
                   rms_norm_eps=src.rms_norm_eps * src.hidden_size / target.hidden_size)


def head_dims(d: int, big: int) -> torch.Tensor:
    """(d,) where each dim of a d-dim head goes in a big-dim head (HF rotate-half layout).

    Rotary pair (j, j + d/2) turns at theta^(-2j/d); at (m j, m j + big/2), m = big/d, it turns at
    theta^(-2 m j/big), the same.
    """
    m, j = big // d, torch.arange(d // 2)
    return torch.cat([m * j, m * j + big // 2])


def query_heads(src: DecoderConfig, target: DecoderConfig) -> torch.Tensor:
    """(H_src,) the target query head of each source query head: KV group kept, first slots of the group."""
    q = torch.arange(src.num_attention_heads)
    return (q // _group(src)) * _group(target) + q % _group(src)


@torch.no_grad()
def expand_model(model: DuplexLM, target: DecoderConfig, *, device: str | torch.device | None = None,
                 dtype: torch.dtype | None = None, progress: Callable[[], None] | None = None) -> DuplexLM:
    """`model` in `target`'s decoder shape, computing the same logits (see the module docstring).

    The new model is built directly on `device` in `dtype` (default: the source's), tensor by tensor,
    so an 8B expansion never exists in fp32 or on the host. `progress()` is called once per target layer.
    Raises ValueError when `target` cannot hold the source (fewer layers, narrower, too few KV groups, ...).
    """
    src = model.cfg.decoder
    cfg = ModelConfig(expanded_config(src, target), copy.deepcopy(model.cfg.audio))
    _check_known_parameters(model)
    big = _zeros(cfg, torch.device(device) if device is not None else model.device, dtype or model.dtype)
    s_lm, t_lm = model.lm, big.lm
    gain = math.sqrt(src.hidden_size / cfg.decoder.hidden_size)  # RMSNorm over the padded width
    _put(t_lm.model.embed_tokens.weight, s_lm.model.embed_tokens.weight)
    if not cfg.decoder.tie_word_embeddings:
        _put(t_lm.lm_head.weight, s_lm.lm_head.weight)  # a copy: untied from here on
    for i, blk in enumerate(t_lm.model.layers):
        if i < src.num_hidden_layers:
            _expand_block(s_lm.model.layers[i], blk, src, cfg.decoder, gain)
        # else: left all zero, an exact identity
        if progress is not None:
            progress()
    _put(t_lm.model.norm.weight, s_lm.model.norm.weight, gain)
    if model.audio is not None:
        s_audio = dict(model.audio.named_parameters())
        for name, p in big.audio.named_parameters():
            _put(p, s_audio[name])  # as it is; `proj` (out = hidden) gets zero rows
    return big.eval()


def _group(c: DecoderConfig) -> int:
    return c.num_attention_heads // c.num_key_value_heads


def _check_known_parameters(model: DuplexLM) -> None:
    with torch.device("meta"):
        plain = set(DuplexLM(model.cfg).state_dict())
    extra = sorted(set(model.state_dict()) - plain)
    if extra:
        raise ValueError(f"cannot expand a model with extra parameters (an attached adapter?): {extra[:3]}")


def _zeros(cfg: ModelConfig, device: torch.device, dtype: torch.dtype) -> DuplexLM:
    """A `DuplexLM(cfg)` of zeros on `device` in `dtype`, made parameter by parameter (tied stay tied)."""
    with torch.device("meta"):
        model = DuplexLM(cfg)
    made: dict[int, nn.Parameter] = {}
    for mod in model.modules():
        for name, p in list(mod._parameters.items()):
            if p is not None:
                if id(p) not in made:
                    made[id(p)] = nn.Parameter(torch.zeros(p.shape, device=device, dtype=dtype))
                mod._parameters[name] = made[id(p)]
    return model


def _put(dst: torch.Tensor, w: torch.Tensor, scale: float = 1.0) -> None:
    """w into the leading corner of dst (zero-padding every dim), times `scale` (in fp32, then cast)."""
    dst[tuple(slice(0, n) for n in w.shape)] = (w.float() * scale).to(dst)


def _put_heads(dst: torch.Tensor, w: torch.Tensor, heads: torch.Tensor, dims: torch.Tensor, big: int, dim: int,
               scale: float = 1.0) -> None:
    """Axis `dim` of w, (n d) head-blocked, into dst's (N big): head h -> heads[h], dim j -> dims[j]; rest stays 0.

    Other axes are zero-padded as in `_put`.
    """
    t = dst.unflatten(dim, (-1, big))  # a view: writing into it writes dst
    v = (w.float() * scale).to(dst).unflatten(dim, (len(heads), len(dims)))
    idx: list = [slice(0, s) for s in v.shape]
    # Two adjacent index tensors: the indexed view has v's shape (..., n, d, ...).
    idx[dim], idx[dim + 1] = heads.to(dst.device)[:, None], dims.to(dst.device)[None, :]
    t[tuple(idx)] = v


def _expand_block(s: Block, t: Block, src: DecoderConfig, tgt: DecoderConfig, gain: float) -> None:
    _put(t.input_layernorm.weight, s.input_layernorm.weight, gain)
    _put(t.post_attention_layernorm.weight, s.post_attention_layernorm.weight, gain)
    dims, q_heads = head_dims(src.head_dim, tgt.head_dim), query_heads(src, tgt)
    kv_heads = torch.arange(src.num_key_value_heads)
    q_scale = math.sqrt(tgt.head_dim / src.head_dim)  # softmax scale 1/sqrt(D) -> the source's 1/sqrt(d)
    sa, ta = s.self_attn, t.self_attn
    for name, heads, scale in (("q_proj", q_heads, q_scale), ("k_proj", kv_heads, 1.0), ("v_proj", kv_heads, 1.0)):
        sp, tp = getattr(sa, name), getattr(ta, name)
        _put_heads(tp.weight, sp.weight, heads, dims, tgt.head_dim, 0, scale)
        if sp.bias is not None:
            _put_heads(tp.bias, sp.bias, heads, dims, tgt.head_dim, 0, scale)
    _put_heads(ta.o_proj.weight, sa.o_proj.weight, q_heads, dims, tgt.head_dim, 1)  # the other heads' columns stay zero
    for name in ("gate_proj", "up_proj", "down_proj"):
        _put(getattr(t.mlp, name).weight, getattr(s.mlp, name).weight)
