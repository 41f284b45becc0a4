"""A small streaming audio encoder: log-mel (100 Hz) -> 10 embeddings per 1 s chunk.

Each chunk is encoded together with a bounded left context (the previous
`context_chunks` chunks' log-mel), and only the current chunk's outputs are kept,
so streaming encoding equals offline encoding chunk by chunk. Encoding a chunk
of digital silence with the real left context gives the silence hypothesis.

With `inner_stride` k the transformer runs at 100/k Hz and groups of adjacent
frames are merged into one embedding at the end, so the LM still sees 10 per chunk.
"""

from __future__ import annotations

import torch
from torch import nn

from .config import AudioEncoderConfig


class AudioEncoder(nn.Module):
    def __init__(self, cfg: AudioEncoderConfig, out_dim: int):
        super().__init__()
        self.cfg = cfg
        stride = cfg.inner_stride or cfg.frames_per_chunk // cfg.embeds_per_chunk
        self.inner_per_chunk = cfg.frames_per_chunk // stride
        self.merge = self.inner_per_chunk // cfg.embeds_per_chunk  # inner frames per output embedding
        assert stride * self.inner_per_chunk == cfg.frames_per_chunk and self.merge * cfg.embeds_per_chunk == self.inner_per_chunk, \
            "frames_per_chunk must be a multiple of the stride, and the inner frames of embeds_per_chunk"
        w = cfg.width
        self.conv = nn.Sequential(
            nn.Conv1d(cfg.n_mels, w, kernel_size=3, padding=1), nn.GELU(),
            nn.Conv1d(w, w, kernel_size=stride, stride=stride), nn.GELU(),
        )
        n_pos = (cfg.context_chunks + 1) * self.inner_per_chunk
        self.pos = nn.Parameter(torch.zeros(n_pos, w))
        layer = nn.TransformerEncoderLayer(w, cfg.heads, 4 * w, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(w * self.merge)
        self.proj = nn.Linear(w * self.merge, out_dim)

    def forward(self, mel: torch.Tensor, context: torch.Tensor, return_inner: bool = False):
        """mel: (B, F, n_mels) for the current chunk(s); context: (B, C*F, n_mels) preceding log-mel.

        Returns (B, E, out_dim), E = embeds_per_chunk; with `return_inner` also the current
        chunk's inner frames (B, F/stride, width), for frame-level training objectives.
        """
        cfg = self.cfg
        assert mel.shape[1:] == (cfg.frames_per_chunk, cfg.n_mels), f"mel must be (B, {cfg.frames_per_chunk}, {cfg.n_mels}), got {tuple(mel.shape)}"
        x = torch.cat([context, mel], dim=1).transpose(1, 2)  # (B, n_mels, (C+1)F)
        h = self.conv(x).transpose(1, 2)  # (B, (C+1)*inner, w)
        h = self.blocks(h + self.pos[: h.shape[1]])
        cur = h[:, -self.inner_per_chunk:]  # (B, inner, w)
        out = self.proj(self.norm(cur.reshape(cur.shape[0], cfg.embeds_per_chunk, -1)))
        return (out, cur) if return_inner else out

    def context_frames(self) -> int:
        return self.cfg.context_chunks * self.cfg.frames_per_chunk
