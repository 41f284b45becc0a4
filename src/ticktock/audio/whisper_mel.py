"""Whisper's log-mel (the audio front of Qwen2.5-Omni and MiniCPM-o), offline and one unit at a time.

Whisper (`transformers.WhisperFeatureExtractor`): 16 kHz, n_fft 400 (periodic Hann), hop 160, Slaney mel
filters over 0-8 kHz (80 bins for Whisper-medium / MiniCPM-o, 128 for Qwen2.5-Omni), frames *centred*
(frame t covers samples [160 t - 200, 160 t + 200), reflect padding at the clip's ends, the last frame
dropped), power -> log10 (floored at 1e-10) -> floored at `clip max - 8` -> (x + 4) / 4.

`whisper_log_mel` is that, offline (tests/test_layouts.py checks it against the feature extractor).

Streaming: a unit's frames must depend on audio heard so far only. Frame t of unit u is taken as Whisper's
centred frame of the signal *delayed by* D = 40 + 160 L samples (2.5 ms + L frames):

    frame t of unit u covers samples [U + 160 t - 240 - 160 L, U + 160 t + 160 - 160 L),  U = u * chunk

so the unit's F = chunk / 160 frames end exactly at its last sample when L = 0, and L > 0 buys L
*lookahead* frames (the next unit's first L frames) from the same samples, for an encoder whose CNN reads
one frame past the unit (MiniCPM-o's Whisper: L = 1). `unit_log_mel` returns F + L frames from the chunk
and its left context (240 + 160 L samples); concatenated own frames of consecutive units equal the offline
frames of the delayed signal (up to the reflect padding of the first two frames).

The clip-wide floor (`max - 8`) cannot be known while streaming: `MelFloor` says what replaces it — a
fixed log10 floor, a running `max - range` over the audio heard (a bounded window), or MiniCPM-o 4.5's
streaming rule (fixed -10 for the first 5 s, then the running rule).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from .features import _as_signal, mel_filterbank
from .io import SAMPLE_RATE

N_FFT, HOP = 400, 160
CENTRE = N_FFT // 2  # Whisper centres frame t on sample 160 t
_POWER_FLOOR = 1e-10


@lru_cache(maxsize=16)
def _constants(n_mels: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(periodic Hann window (400,), Slaney mel filters transposed (201, n_mels)), float64."""
    window = torch.hann_window(N_FFT, periodic=True, dtype=torch.float64, device=device)
    fb_t = torch.tensor(np.array(mel_filterbank(SAMPLE_RATE, N_FFT, n_mels).T), dtype=torch.float64, device=device)
    return window, fb_t


def log10_mel(frames: torch.Tensor, n_mels: int) -> torch.Tensor:
    """(T, 400) float64 sample frames -> (T, n_mels) float64 log10 mel power (floored at 1e-10)."""
    window, fb_t = _constants(n_mels, str(frames.device))
    power = torch.fft.rfft(frames * window, dim=-1).abs().pow(2)  # (T, 201)
    return torch.clamp(power @ fb_t, min=_POWER_FLOOR).log10()


def normalise(logm: torch.Tensor, floor: float | torch.Tensor) -> torch.Tensor:
    """Whisper's last step: floor the log10 mel, then (x + 4) / 4 -> float32."""
    return ((torch.clamp(logm, min=floor) + 4.0) / 4.0).to(torch.float32)


def whisper_log_mel(samples: torch.Tensor | np.ndarray, n_mels: int = 80,
                    log_floor: float | None = None) -> torch.Tensor:
    """Offline Whisper log-mel of a 16 kHz clip (N,) -> float32 (N // 160, n_mels).

    log_floor None: Whisper's own (clip max - 8); a number: that fixed log10 floor instead.
    """
    x = _as_signal(samples)
    padded = torch.nn.functional.pad(x[None, None], (CENTRE, CENTRE), mode="reflect")[0, 0]
    frames = padded.unfold(0, N_FFT, HOP)[:-1]  # torch.stft(center=True) frames, the last one dropped
    logm = log10_mel(frames, n_mels)
    return normalise(logm, logm.max() - 8.0 if log_floor is None else log_floor)


def context_samples(lookahead: int = 0) -> int:
    """Left context (samples before the unit) its frames need: 240 + 160 * lookahead."""
    return N_FFT - HOP + HOP * lookahead


def unit_log10_mel(chunk: np.ndarray | torch.Tensor, left: np.ndarray | torch.Tensor | None, n_mels: int,
                   lookahead: int = 0) -> torch.Tensor:
    """Raw log10 mel of one unit: (F + lookahead, n_mels) float64, F = len(chunk) / 160 (see the module doc).

    left: the audio before the unit (its last `context_samples(lookahead)` are used; shorter or None is
    zero-padded on the left, as at the stream's start).
    """
    x = _as_signal(chunk, "chunk")
    if x.numel() == 0 or x.numel() % HOP:
        raise ValueError(f"a unit must be a positive multiple of {HOP} samples, got {x.numel()}")
    need = context_samples(lookahead)
    ctx = _as_signal(left, "left") if left is not None and len(left) else x.new_zeros(0)
    ctx = ctx[-need:].to(x.device)
    sig = torch.cat([x.new_zeros(need - ctx.numel()), ctx, x])
    return log10_mel(sig.unfold(0, N_FFT, HOP), n_mels)


@dataclass(frozen=True)
class MelFloor:
    """What replaces Whisper's clip-wide `max - 8` floor while streaming.

    fixed: the log10 floor while fewer than `dynamic_after_s` seconds have been heard (and always, when
    `dynamic_range` is None); then the floor is (the max over the last `window_s` seconds heard,
    this unit included) - `dynamic_range`.
    """

    fixed: float = -10.0
    dynamic_range: float | None = 8.0
    dynamic_after_s: float = 0.0
    window_s: float = 30.0

    @classmethod
    def from_spec(cls, spec: dict | None) -> "MelFloor":
        return cls(**(spec or {}))


class WhisperMelStream:
    """Streaming Whisper log-mel, one unit per call: chunk (F * 160,) -> (F + lookahead, n_mels) float32.

    `features(chunk, commit=False)` gives the frames a chunk would get without advancing (a silence
    hypothesis with the real left context).
    """

    def __init__(self, n_mels: int, chunk_samples: int, lookahead: int = 0, floor: MelFloor | None = None):
        self.n_mels, self.chunk_samples, self.lookahead = n_mels, chunk_samples, lookahead
        self.floor = floor or MelFloor()
        keep = max(1, int(round(self.floor.window_s * SAMPLE_RATE / chunk_samples)))
        self.reset(keep)

    def reset(self, keep: int | None = None) -> None:
        self.tail = np.zeros(context_samples(self.lookahead), dtype=np.float32)
        self.heard = 0  # samples
        self.maxima: deque[float] = deque(maxlen=keep or self.maxima.maxlen)  # per unit, raw log10 max

    def features(self, chunk: np.ndarray, commit: bool = True) -> torch.Tensor:
        return normalise(*self.log10_and_floor(chunk, commit))

    def log10_and_floor(self, chunk: np.ndarray, commit: bool = True) -> tuple[torch.Tensor, float]:
        """The unit's raw log10 mel (F + lookahead, n_mels) float64 and the floor `features` applies to it
        (training computes the floors of a whole session here and the log-mel itself, batched)."""
        chunk = np.asarray(chunk, dtype=np.float32)
        logm = unit_log10_mel(chunk, self.tail, self.n_mels, self.lookahead)
        top = float(logm.max())
        f = self.floor
        heard_s = (self.heard + len(chunk)) / SAMPLE_RATE
        if f.dynamic_range is None or heard_s <= f.dynamic_after_s:
            floor = f.fixed
        else:
            floor = max([*self.maxima, top]) - f.dynamic_range
        if commit:
            self.tail = np.concatenate([self.tail, chunk])[-len(self.tail):]
            self.heard += len(chunk)
            self.maxima.append(top)
        return logm, floor


__all__ = ["MelFloor", "WhisperMelStream", "context_samples", "log10_mel", "normalise", "unit_log10_mel",
           "whisper_log_mel"]
