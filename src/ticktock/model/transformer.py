"""The transformer language model: a Qwen2-compatible decoder-only stack (RMSNorm, RoPE, GQA, SwiGLU, optional QKV
bias, optional Qwen3 QK-norm).

Parameter names match HF `Qwen2ForCausalLM` / `Qwen3ForCausalLM` (`model.layers.N.self_attn.q_proj.weight`,
`...self_attn.q_norm.weight`, ...), so HF checkpoints load directly and transformers can serve as the test oracle.
RoPE is 1-D: Qwen2.5-Omni's multimodal RoPE gives every token three equal position components when the
input holds no image or video (audio and text only), and then equals this one (tests/test_layouts.py).
Positions are explicit (logical positions from the cache ledger), and the new
tokens of a forward may carry a tree mask instead of a causal one.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..cache.kv import KVCache
from .config import DecoderConfig


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope_cos_sin(positions: torch.Tensor, head_dim: int, theta: float, dtype: torch.dtype):
    """positions (B, T) -> cos, sin (B, 1, T, D) in HF's rotate-half layout."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=positions.device, dtype=torch.float32) / head_dim))
    ang = positions.float()[..., None] * inv  # (B, T, D/2)
    emb = torch.cat([ang, ang], dim=-1)[:, None]
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rot * sin


class Attention(nn.Module):
    def __init__(self, cfg: DecoderConfig, layer: int):
        super().__init__()
        self.layer, self.h, self.hkv, self.d = layer, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, self.h * self.d, bias=cfg.attention_bias)
        self.k_proj = nn.Linear(cfg.hidden_size, self.hkv * self.d, bias=cfg.attention_bias)
        self.v_proj = nn.Linear(cfg.hidden_size, self.hkv * self.d, bias=cfg.attention_bias)
        self.q_norm: RMSNorm | None = None
        self.k_norm: RMSNorm | None = None
        self.o_proj = nn.Linear(self.h * self.d, cfg.hidden_size, bias=False)
        assert self.h % self.hkv == 0, f"{self.h} query heads must split evenly over {self.hkv} KV heads"
        if cfg.qk_norm:  # Qwen3: per-head RMSNorm on q and k before RoPE
            self.q_norm = RMSNorm(self.d, cfg.rms_norm_eps)
            self.k_norm = RMSNorm(self.d, cfg.rms_norm_eps)

    def forward(self, x, cos, sin, mask, cache: KVCache | None):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.d)
        k = self.k_proj(x).view(b, t, self.hkv, self.d)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)  # (B, H, T, D), (B, Hkv, T, D)
        v = self.v_proj(x).view(b, t, self.hkv, self.d).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:
            k, v = cache.write(self.layer, k, v)  # all resident slots (B, Hkv, S, D)
        if self.hkv != self.h:
            k = k.repeat_interleave(self.h // self.hkv, dim=1)
            v = v.repeat_interleave(self.h // self.hkv, dim=1)
        out = masked_attention(q, k, v, mask)  # mask (T, S) or (B, 1, T, S) bool, True = attend
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.h * self.d))


# On CUDA, masked SDPA may pick cuDNN, which builds a plan per new shape: a cache that grows by a few slots every
# forward rebuilds it every forward, each session of a batch its own (tens of ms each). The memory-efficient kernel
# takes any length as it is; math is the last resort.
_CUDA_MASKED_SDPA = [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


def masked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Attention under `mask` (bool, True = attend, or additive), q (B, H, T, d), k/v (B, H, S, d) -> (B, H, T, d)."""
    if not q.is_cuda:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with sdpa_kernel(_CUDA_MASKED_SDPA):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class MLP(nn.Module):
    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg: DecoderConfig, layer: int):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg, layer)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, mask, cache):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask, cache)
        return x + self.mlp(self.post_attention_layernorm(x))


class Backbone(nn.Module):
    """HF's `model.*` submodule: embeddings, blocks, final norm."""

    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(Block(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class Transformer(nn.Module):
    """Qwen2ForCausalLM-compatible decoder with explicit positions and an optional tree mask."""

    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.model = Backbone(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model.embed_tokens(ids)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache: KVCache | None = None,
                new_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Hidden states after the final norm.

        x: (B, T, D) input embeddings; positions: (B, T) logical positions.
        cache: when given, the T new slots must already be reserved; attention covers all resident slots.
        new_mask: (T, T) bool among the new tokens (True = attend), or (B, T, T) one per sequence (training on
        layouts whose tokens saw different caches: `train.side_channel.kv_visibility`); default causal.
        Returns (B, T, D).
        """
        b, t, _ = x.shape
        if new_mask is None:
            new_mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        past = cache.length - t if cache is not None else 0
        new_mask = new_mask.to(x.device)
        lead = new_mask.shape[:-2]  # () or (B,)
        mask = torch.cat([torch.ones(*lead, t, past, dtype=torch.bool, device=x.device), new_mask], dim=-1)
        if mask.dim() == 3:
            mask = mask[:, None]  # (B, 1, T, S): the same for every head
        cos, sin = rope_cos_sin(positions, self.cfg.head_dim, self.cfg.rope_theta, x.dtype)
        for blk in self.model.layers:
            x = blk(x, cos, sin, mask, cache)
        return self.model.norm(x)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden (..., D) -> logits (..., V) float32; ids past the tokenizer (padding rows) are -inf.

        The only place logits are made (every engine and decoder calls it), so a padded id can never be
        sampled, drafted or accepted. Padding rows are never read either: an expanded or padded table can be
        far larger than the tokenizer (151,936 rows for 2,100 ids), and reading it is a 1-token forward's cost.
        """
        real, w = self.cfg.tokenizer_vocab, self.lm_head.weight
        if real is None or real >= w.shape[0]:
            return self.lm_head(hidden).float()
        z = F.linear(hidden, w[:real]).float()
        return F.pad(z, (0, w.shape[0] - real), value=float("-inf"))
