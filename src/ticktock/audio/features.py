"""Log-mel features (torch), offline and streaming, bit-for-bit consistent.

Frame layout: n_fft 400 (25 ms), hop 160 (10 ms -> 100 frames/s), periodic Hann
window, 80 Slaney mel bins over 0-8 kHz (the same filterbank as Whisper /
librosa's default), NO centre padding: frame t covers samples [160 t, 160 t + 400).

Normalisation (per frame, deliberately NOT Whisper's global one): Whisper floors
log-mel at `max_over_clip - 8`, which depends on the whole clip and so differs
between a 1 s chunk and the full signal. We instead use a fixed floor:
    x = max(log10(max(power, 1e-10)), -8.0);  feature = (x + 4) / 4
i.e. Whisper's formula with the clip max pinned at 0 (a full-scale signal), so
features lie in [-1, ~1.5] like Whisper's, and each frame depends only on its own
400 samples. That is what makes streaming output equal offline output.

Streaming: a 16000-sample chunk plus the last 240 (= n_fft - hop) samples of the
previous chunk gives exactly 100 frames whose grid continues the previous chunk's.
Concatenated chunk outputs == log_mel(concat(zeros(240), signal)).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from .errors import AudioError
from .io import SAMPLE_RATE

N_FFT = 400
HOP_LENGTH = 160
N_MELS = 80
CONTEXT_SAMPLES = N_FFT - HOP_LENGTH  # 240: left context a chunk needs
LOG_FLOOR = -8.0  # log10 power floor (see module docstring)
_POWER_EPS = 1e-10


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    """Slaney mel scale: linear below 1 kHz, logarithmic above."""
    f = np.asarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    mel = f / f_sp
    log_region = f >= min_log_hz
    log_mel_ = min_log_hz / f_sp + np.log(np.maximum(f, 1e-12) / min_log_hz) / logstep
    return np.where(log_region, log_mel_, mel)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


@lru_cache(maxsize=None)
def mel_filterbank(sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS
                   ) -> np.ndarray:
    """Slaney-normalised triangular mel filters, shape (n_mels, n_fft // 2 + 1), 0..sr/2.

    Matches librosa.filters.mel(sr, n_fft, n_mels) defaults (htk=False, norm="slaney").
    """
    fft_freqs = np.linspace(0.0, sample_rate / 2, n_fft // 2 + 1)
    mel_pts = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(sample_rate / 2), n_mels + 2))
    fdiff = np.diff(mel_pts)
    ramps = mel_pts[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_pts[2:] - mel_pts[:-2]))[:, None]  # equal-area (Slaney) norm
    weights.flags.writeable = False  # cached: guard against in-place edits
    return weights


@lru_cache(maxsize=8)
def _stft_constants(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(Hann window (400,), mel filterbank transposed (201, 80)), float64, per device."""
    window = torch.hann_window(N_FFT, periodic=True, dtype=torch.float64, device=device)
    fb_t = torch.tensor(np.array(mel_filterbank().T), dtype=torch.float64, device=device)
    return window, fb_t


def _as_signal(samples: torch.Tensor | np.ndarray, name: str = "samples") -> torch.Tensor:
    """1-D float64 tensor (float64 so per-frame results don't depend on batching)."""
    if isinstance(samples, np.ndarray):
        if not np.issubdtype(samples.dtype, np.floating):  # ints would be unscaled
            raise AudioError(
                f"unsupported sample dtype {samples.dtype} for {name} (expected float)"
            )
        samples = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float64))
    elif not isinstance(samples, torch.Tensor):
        raise AudioError(
            f"{name} must be a numpy array or torch tensor, got {type(samples).__name__}"
        )
    if not samples.is_floating_point():
        raise AudioError(f"unsupported sample dtype {samples.dtype} for {name} (expected float)")
    if samples.dim() != 1:
        raise AudioError(f"{name} must be mono with shape (N,), got shape {tuple(samples.shape)}")
    return samples.to(torch.float64)


def _frames_to_log_mel(frames: torch.Tensor) -> torch.Tensor:
    """(T, 400) float64 frames -> (T, 80) float32 normalised log-mel."""
    window, fb_t = _stft_constants(str(frames.device))
    power = torch.fft.rfft(frames * window, dim=-1).abs().pow(2)  # (T, 201)
    mel = power @ fb_t  # (T, 80)
    logm = torch.clamp(mel, min=_POWER_EPS).log10().clamp(min=LOG_FLOOR)
    return ((logm + 4.0) / 4.0).to(torch.float32)


def log_mel(samples: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Log-mel of a whole 16 kHz mono signal (N,) -> float32 (T, 80), T = (N - 400)//160 + 1.

    No centre padding (T = 0 if N < 400). Output lives on the input tensor's device.
    """
    x = _as_signal(samples)
    if x.numel() < N_FFT:
        return torch.zeros(0, N_MELS, dtype=torch.float32, device=x.device)
    return _frames_to_log_mel(x.unfold(0, N_FFT, HOP_LENGTH))


def chunk_log_mel(chunk: torch.Tensor | np.ndarray,
                  left_context_samples: torch.Tensor | np.ndarray | None) -> torch.Tensor:
    """Features of one chunk given the audio just before it -> float32 (L // 160, 80).

    `chunk`: (L,) with L a positive multiple of 160 (16000 -> 100 frames).
    `left_context_samples`: the preceding audio; only its last 240 samples are used
    (shorter / None is zero-padded on the left, as at stream start). Pure function:
    the model calls it directly, e.g. for a silence hypothesis with the same context.
    """
    x = _as_signal(chunk, "chunk")
    if x.numel() == 0 or x.numel() % HOP_LENGTH:
        raise AudioError(
            f"chunk length must be a positive multiple of {HOP_LENGTH} samples, got {x.numel()}"
        )
    if left_context_samples is None:
        ctx = x.new_zeros(0)
    else:
        ctx = _as_signal(left_context_samples, "left_context_samples").to(x.device)
    ctx = ctx[-CONTEXT_SAMPLES:] if ctx.numel() else ctx
    ctx = torch.cat([x.new_zeros(CONTEXT_SAMPLES - ctx.numel()), ctx])
    return log_mel(torch.cat([ctx, x]))


class StreamingLogMel:
    """Stateful chunk-by-chunk log-mel: each 16000-sample chunk -> (100, 80).

    Keeps the last 240 samples as left context (zeros before the first chunk), so
    torch.cat of all outputs == log_mel(concat(zeros(240), whole_signal)).
    """

    def __init__(self) -> None:
        self._context = torch.zeros(CONTEXT_SAMPLES, dtype=torch.float64)

    @property
    def left_context(self) -> torch.Tensor:
        """Copy of the current left context, (240,) float64; pass to chunk_log_mel."""
        return self._context.clone()

    def reset(self) -> None:
        """Start a new stream (left context back to silence)."""
        self._context = torch.zeros(CONTEXT_SAMPLES, dtype=torch.float64)

    def __call__(self, chunk: torch.Tensor | np.ndarray) -> torch.Tensor:
        """Features of the next chunk (L,) -> (L // 160, 80); advances the context."""
        x = _as_signal(chunk, "chunk")
        feats = chunk_log_mel(x, self._context)
        self._context = torch.cat([self._context.to(x.device), x])[-CONTEXT_SAMPLES:].clone()
        return feats
