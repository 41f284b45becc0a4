"""`DuplexLM`: the decoder joined with its audio front: ticktock's streaming encoder, or a published
model's audio tower (`cfg.tower`, built by `model.layouts`; the tower streams itself: `audio.streaming`)."""

from __future__ import annotations

import torch
from torch import nn

from .audio_encoder import AudioEncoder
from .config import ModelConfig
from .transformer import Transformer


class DuplexLM(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.lm = Transformer(cfg.decoder)
        if cfg.tower is not None:
            from .layouts import build_tower  # the layouts import this module's siblings

            self.audio = build_tower(cfg.tower)
        else:
            self.audio = AudioEncoder(cfg.audio, cfg.decoder.hidden_size) if cfg.audio else None
        self.layout = "ticktock"  # the checkpoint layout it was loaded from (`model.io.load_model`)

    @property
    def device(self) -> torch.device:
        return self.lm.lm_head.weight.device

    @property
    def dtype(self) -> torch.dtype:
        return self.lm.lm_head.weight.dtype

    def encode_audio(self, mel: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """mel (F, n_mels), context (C*F, n_mels) -> (E, hidden) audio embeddings for one chunk."""
        if not isinstance(self.audio, AudioEncoder):
            raise RuntimeError("this model has no ticktock audio encoder (a tower streams itself: audio.streaming)")
        dev, dt = self.device, self.dtype
        return self.audio(mel[None].to(dev, dt), context[None].to(dev, dt))[0]

    def embed_segments(self, segments: list[torch.Tensor]) -> torch.Tensor:
        """Mixed inputs -> (1, T, D): LongTensor segments are token ids, float segments (n, D) are embeddings."""
        parts = []
        for seg in segments:
            if seg.dtype == torch.long:
                parts.append(self.lm.embed(seg.to(self.device)))
            else:
                parts.append(seg.to(self.device, self.dtype))
        return torch.cat(parts, dim=0)[None]

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
