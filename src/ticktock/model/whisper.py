"""Whisper encoder pieces shared by the audio towers of published models (`layouts/`).

Parameter names follow HF `WhisperEncoderLayer` (`self_attn.{q,k,v,out}_proj`, `self_attn_layer_norm`,
`fc1`, `fc2`, `final_layer_norm`), which Qwen2.5-Omni's audio encoder and MiniCPM-o's `apm` share, so
their checkpoints load as they are. Pre-norm blocks, exact GELU, no bias on `k_proj`. Attention can read
the keys/values of earlier frames (`past`), for encoders that stream with a cache (MiniCPM-o).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class WhisperAttention(nn.Module):
    def __init__(self, d_model: int, heads: int):
        super().__init__()
        assert d_model % heads == 0, f"d_model {d_model} must split into {heads} heads"
        self.heads, self.hd = heads, d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None = None,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """x (B, T, d); past: keys/values of earlier frames (B, H, S, hd) each, attended to in full.

        mask: (T, S + T) bool, True = attend (default: all). Returns (B, T, d) and this call's (k, v), past included.
        """
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, self.heads, self.hd).transpose(1, 2)  # noqa: E731  (B, H, T, hd)
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out_proj(out.transpose(1, 2).reshape(b, t, -1)), (k, v)


class WhisperEncoderLayer(nn.Module):
    def __init__(self, d_model: int, heads: int, ffn: int):
        super().__init__()
        self.self_attn = WhisperAttention(d_model, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, ffn)
        self.fc2 = nn.Linear(ffn, d_model)
        self.final_layer_norm = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, past=None, mask=None):
        """x (B, T, d) -> (B, T, d) and the layer's (k, v) (see `WhisperAttention`)."""
        a, kv = self.self_attn(self.self_attn_layer_norm(x), past, mask)
        x = x + a
        return x + self.fc2(F.gelu(self.fc1(self.final_layer_norm(x)))), kv


def check_gelu(spec: dict) -> None:
    act = spec.get("activation_function", "gelu")
    if act != "gelu":
        raise ValueError(f"audio encoder activation {act!r} is not supported (only Whisper's exact 'gelu')")


def sinusoids(length: int, channels: int, max_timescale: float = 10000.0) -> torch.Tensor:
    """Whisper's sinusoidal position table (length, channels) float32: [sin | cos] halves."""
    assert channels % 2 == 0, "sinusoidal positions need an even width"
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2).float())
    t = torch.arange(length)[:, None].float() * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


def conv_out_len(frames: int) -> int:
    """Frames after Whisper's stem (conv k3 s1, then conv k3 s2, both padding 1)."""
    return (frames - 1) // 2 + 1


__all__ = ["WhisperAttention", "WhisperEncoderLayer", "check_gelu", "conv_out_len", "sinusoids"]
