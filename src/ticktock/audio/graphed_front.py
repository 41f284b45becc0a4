"""ticktock's audio front on a GPU: log-mel and the audio encoder in one CUDA graph.

On a CPU the front computes its log-mel with torch's CPU kernels and launches the encoder layer by layer; on
a GPU that same path costs a few ms of host work per chunk (about 3 ms on an H200's host, with spikes to 40 ms
from the CPU thread pools), all of it after the chunk's audio has arrived, so it sits in every unit's ℓ
whatever the decoder. Here the chunk's samples go to the device once and one graph replay makes its log-mel
and its embeddings. One graph per (model, chunk length), shared by every session: a session's mel context is
copied into the graph's static input before each replay.
"""

from __future__ import annotations

import warnings
import weakref
from typing import TYPE_CHECKING

import numpy as np
import torch

from .features import CONTEXT_SAMPLES, log_mel

if TYPE_CHECKING:
    from ..model.duplex import DuplexLM


class GraphedAudioFront:
    """(left context samples, chunk samples, mel context) -> (embeddings (E, D), the chunk's log-mel (F, n_mels)).

    capture: make the graph (None = on CUDA); without it each call runs the same staged work eagerly (tests).
    """

    @torch.no_grad()
    def __init__(self, model: DuplexLM, chunk_samples: int, capture: bool | None = None):
        # the engine's capture helper, imported here: audio stays importable without the engine
        from ..engine.fast import capture_graph

        acfg, dev = model.cfg.audio, model.device
        self.model = model
        self.samples = torch.zeros(CONTEXT_SAMPLES + chunk_samples, dtype=torch.float64, device=dev)
        self.context = torch.zeros(acfg.context_chunks * acfg.frames_per_chunk, acfg.n_mels, device=dev)
        self.graph = None
        if dev.type == "cuda" if capture is None else capture:
            try:
                self.graph, (self.emb, self.mel) = capture_graph(self._run, None, dev, warmups=2)
            except RuntimeError as err:  # a kernel that cannot be captured here: the same work, launched eagerly
                warnings.warn(f"audio front not captured as a CUDA graph (it runs eagerly): {err}")
                torch.cuda.synchronize(dev)

    def _run(self) -> tuple[torch.Tensor, torch.Tensor]:
        mel = log_mel(self.samples)
        dt = self.model.dtype
        return self.model.audio(mel[None].to(dt), self.context[None].to(dt))[0], mel

    @torch.no_grad()
    def __call__(self, tail: np.ndarray, chunk: np.ndarray, context: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        self.samples.copy_(torch.from_numpy(np.concatenate([tail[-CONTEXT_SAMPLES:], chunk]).astype(np.float64)))
        self.context.copy_(context)
        if self.graph is None:
            return self._run()
        self.graph.replay()
        return self.emb.clone(), self.mel.clone()


_SHARED: weakref.WeakKeyDictionary[DuplexLM, dict[tuple, GraphedAudioFront]] = weakref.WeakKeyDictionary()


def graphed_audio_front(model: DuplexLM, chunk_samples: int, capture: bool | None = None) -> GraphedAudioFront:
    """The model's graphed front for chunks of `chunk_samples`, made at first use (`GraphedAudioFront`)."""
    per_model = _SHARED.setdefault(model, {})
    key = (chunk_samples, capture)
    if key not in per_model:
        per_model[key] = GraphedAudioFront(model, chunk_samples, capture)
    return per_model[key]
