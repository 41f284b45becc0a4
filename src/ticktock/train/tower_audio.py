"""Training audio for a model whose audio front is a published model's tower, embedded as its stream does.

A session's stream (`QwenOmniStream`) takes each unit's Whisper log-mel (the unit's frames and 240 samples
before it) under a floor that depends on everything heard since the session began (`MelFloor`), then
encodes it within the tower's windows. Training reproduces that exactly:

* the rendering worker augments the session's waveform (gain, noise: `augment_waveform`) and runs the
  stream's own log-mel over the whole session for each unit's floor (`unit_floors`);
* the trainer recomputes the window's log-mel batched on the device, floors each unit as the stream did
  and encodes the units with the tower's `encode_units` (`tower_embeddings`).

Augmenting in the worker, before the floors, keeps the floors those of the audio the model hears. The
encoder's word-frame objective (`word_frames`) belongs to ticktock's own encoder and is not used here.
"""

from __future__ import annotations

import numpy as np
import torch

from ..audio.whisper_mel import HOP, N_FFT, WhisperMelStream, log10_mel, normalise
from ..model.duplex import DuplexLM
from .features import augment_waveform, freq_warp, spec_augment


def stream_mel(model: DuplexLM, chunk_samples: int) -> WhisperMelStream:
    """The log-mel a session's stream runs for this model's tower (its frames, lookahead and floor rule)."""
    if not hasattr(model.audio, "encode_units"):
        raise ValueError(f"the {model.layout} audio tower has no batched training path (`encode_units`): "
                         "training its stream is not implemented")
    mel = model.audio.streaming(chunk_samples).mel
    if mel.lookahead:
        raise ValueError("a tower whose log-mel reads frames past its unit is not trainable here")
    return mel


def worker_audio(audio: np.ndarray, seed: int) -> np.ndarray:
    """A session's waveform (N,) augmented (random gain and noise) and rounded to float16 as examples hold it,
    so the floors are computed from exactly the samples the trainer reads."""
    x = augment_waveform(torch.from_numpy(np.asarray(audio, dtype=np.float32))[None],
                         torch.Generator().manual_seed(seed))[0]
    return x.numpy().astype(np.float16).astype(np.float32)


def unit_floors(mel: WhisperMelStream, audio: np.ndarray, n_units: int) -> np.ndarray:
    """(n_units,) the log10 floor the stream applies to each unit of `audio` (the session from its start)."""
    chunk = mel.chunk_samples
    x = np.zeros(n_units * chunk, dtype=np.float32)
    x[: min(len(audio), len(x))] = audio[: len(x)]
    mel.reset()
    return np.array([mel.log10_and_floor(x[u * chunk:(u + 1) * chunk])[1] for u in range(n_units)])


def tower_embeddings(model: DuplexLM, b: dict[str, torch.Tensor], train: bool,
                     gen: torch.Generator | None = None) -> torch.Tensor:
    """A batch's audio embeddings: (B, U * E, D).

    b["audio"] (B, (1 + U) * chunk + 240): the unit before the window, its U units and the log-mel's left
    context (`window_audio`); b["floor"] (B, 1 + U) each unit's log10 floor; b["unit0"] (B,) the window's
    first unit's index in its session. Training adds frequency warping and masking on the log-mel.
    """
    units = b["floor"].shape[1]
    frames = b["audio"].double().unfold(-1, N_FFT, HOP)  # (B, (1+U) F, 400): the stream's frames, batched
    logm = log10_mel(frames, model.audio.n_mels)  # (B, (1+U) F, n_mels) float64
    bsz, t, n_mels = logm.shape
    floor = b["floor"].double().repeat_interleave(t // units, dim=1)[..., None]  # (B, (1+U) F, 1)
    mel = normalise(logm, floor)  # float32
    if train:
        mel = spec_augment(freq_warp(mel, gen), gen, fill=normalise(floor, floor))
    return model.audio.encode_units(mel.reshape(bsz, units, t // units, n_mels).to(model.dtype), b["unit0"])
