"""The model's streaming audio front: chunk -> audio embeddings, and the silence hypothesis for the next chunk."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from .features import CONTEXT_SAMPLES, chunk_log_mel
from .graphed_front import graphed_audio_front

if TYPE_CHECKING:  # the model imports nothing from here; only the annotations need it
    from ..model.duplex import DuplexLM


class AudioFrontEnd:
    """Streaming audio state: chunk -> audio embeddings (E, D), and the silence hypothesis for the next chunk.

    graphed: log-mel and encoder on the model's device, one CUDA graph replay there (`GraphedAudioFront`; on a
    CPU its staged work run eagerly, for tests); None = on CUDA. Else the log-mel on the CPU and the encoder
    launched layer by layer.
    """

    def __init__(self, model: DuplexLM, chunk_samples: int, graphed: bool | None = None):
        self.model, self.chunk_samples = model, chunk_samples
        acfg = model.cfg.audio
        self.n_ctx = acfg.context_chunks * acfg.frames_per_chunk
        self.silence = np.zeros(chunk_samples, dtype=np.float32)
        if graphed is None:
            graphed = model.device.type == "cuda"
        self.graphed = graphed_audio_front(model, chunk_samples) if graphed else None
        self.reset()

    def reset(self) -> None:
        self.tail = np.zeros(CONTEXT_SAMPLES, dtype=np.float32)
        # with the graphed front the mel context lives on its device, computed there by the same kernels
        silence = torch.from_numpy(self.silence).to(self.model.device) if self.graphed is not None else self.silence
        sil = chunk_log_mel(silence, self.tail)
        self.mel_ctx = sil.repeat(self.n_ctx // sil.shape[0], 1)  # (C*F, n_mels)

    def _embed(self, chunk: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        if self.graphed is not None:
            return self.graphed(self.tail, chunk, self.mel_ctx)
        mel = chunk_log_mel(chunk, self.tail)
        return self.model.encode_audio(mel, self.mel_ctx), mel

    @torch.no_grad()
    def silence_hypothesis(self) -> torch.Tensor:
        """Embeddings of a silent next chunk with the real left context: (E, D)."""
        return self._embed(self.silence)[0]

    @torch.no_grad()
    def push(self, chunk: np.ndarray) -> torch.Tensor:
        emb, mel = self._embed(chunk)
        self.tail = chunk[-CONTEXT_SAMPLES:].astype(np.float32)
        self.mel_ctx = torch.cat([self.mel_ctx, mel])[-self.n_ctx:]
        return emb


def audio_front_end(model: DuplexLM, chunk_samples: int):
    """The model's streaming audio front (`reset`, `push`, `silence_hypothesis`): a published model's audio
    tower streams itself (`model.layouts`); ticktock's encoder runs in `AudioFrontEnd`."""
    streaming = getattr(model.audio, "streaming", None)
    return streaming(chunk_samples) if streaming is not None else AudioFrontEnd(model, chunk_samples)
