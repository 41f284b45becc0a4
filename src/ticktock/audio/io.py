"""Audio loading, validation and resampling (numpy + soundfile only)."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import soundfile as sf

from .errors import AudioError

SAMPLE_RATE = 16000  # the model's input rate
MIN_SAMPLE_RATE = 8000
MAX_SAMPLE_RATE = 192000
MAX_CHANNELS = 64  # more "channels" than this almost surely means a (channels, frames) array

# Resampling filter: Kaiser-windowed sinc. 48 zero crossings per side with beta 9
# (~90 dB stopband) and the cutoff at 94% of the lower Nyquist keeps aliasing out
# while passing everything the 0-8 kHz mel filterbank looks at up to ~7 kHz.
_ZERO_CROSSINGS = 48
_ROLLOFF = 0.94
_KAISER_BETA = 9.0
_MAX_POLYPHASE_TABLE = 4_000_000  # kernel entries; above this use the direct path
_BLOCK_ELEMS = 1 << 21  # elements per matmul block, bounds peak memory


def load_wav(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """Read an audio file with soundfile.

    Returns (samples, sample_rate): float32 mono samples of shape (N,) (channels
    are averaged) and the file's native sample rate. Raises AudioError if the
    file is missing, unreadable, empty, or contains NaN/inf.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise AudioError(f"audio file not found: {path}", hint="check the path")
    if not os.path.isfile(path):
        raise AudioError(f"not a file: {path}", hint="give an audio file, not a folder")
    try:
        data, sr = sf.read(path, dtype="float32", always_2d=True)
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError) as e:
        raise AudioError(f"not a readable audio file: {path} ({e})",
                         hint="give a wav, flac or ogg file (any rate), or convert it to one") from e
    except OSError as e:
        raise AudioError(f"cannot open audio file: {path} ({e})", hint="check that it can be read") from e
    if data.shape[0] == 0 or data.shape[1] == 0:
        raise AudioError(f"audio file is empty (0 samples): {path}", hint="record or render some audio into it")
    mono = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
    if not np.all(np.isfinite(mono)):
        raise AudioError(f"audio file contains NaN or infinite samples: {path}",
                         hint="export the recording again, e.g. as 16-bit PCM wav")
    return np.ascontiguousarray(mono, dtype=np.float32), int(sr)


def check_sample_rate(sample_rate: object) -> None:
    """Raise AudioError unless `sample_rate` is a number in [8 kHz, 192 kHz]."""
    ok_type = isinstance(sample_rate, (int, float, np.integer, np.floating)) and not isinstance(
        sample_rate, (bool, np.bool_)
    )
    if not ok_type or not math.isfinite(float(sample_rate)) or not (
        MIN_SAMPLE_RATE <= float(sample_rate) <= MAX_SAMPLE_RATE
    ):
        raise AudioError(
            f"unsupported sample rate {sample_rate!r} (supported: 8 kHz to 192 kHz)"
        )


def check_audio(samples: np.ndarray, sample_rate: int | float) -> np.ndarray:
    """Validate caller-supplied audio and return it as float32 mono, shape (N,).

    `samples`: numpy array of float32/float64 (nominal range [-1, 1]) or int16
    (scaled by 1/32768), shape (N,) or (frames, channels) -- channels are averaged.
    Raises AudioError for any other type/dtype/shape, empty or non-finite audio,
    or a sample rate outside [8 kHz, 192 kHz].
    """
    if not isinstance(samples, np.ndarray):
        raise AudioError(f"audio samples must be a numpy array, got {type(samples).__name__}")
    if samples.dtype == np.int16:
        samples = samples.astype(np.float32) / 32768.0
    elif samples.dtype not in (np.float32, np.float64):
        raise AudioError(
            f"unsupported sample dtype {samples.dtype} (expected float32, float64 or int16)"
        )
    if samples.ndim == 2:
        if samples.shape[1] > MAX_CHANNELS:
            raise AudioError(
                f"audio of shape {samples.shape} has {samples.shape[1]} channels; expected "
                "(frames, channels) -- transpose a (channels, frames) array"
            )
        samples = samples.mean(axis=1) if samples.shape[1] > 0 else samples[:, :0].ravel()
    elif samples.ndim != 1:
        raise AudioError(
            f"audio must be 1-D (N,) or 2-D (frames, channels), got shape {samples.shape}"
        )
    if samples.size == 0:
        raise AudioError("audio is empty (0 samples)")
    if not np.all(np.isfinite(samples)):
        raise AudioError("audio contains NaN or infinite samples")
    check_sample_rate(sample_rate)
    return np.ascontiguousarray(samples, dtype=np.float32)


def _kaiser_sinc(d: np.ndarray, cutoff: float, half_width: float) -> np.ndarray:
    """Low-pass kernel h(d) at offsets `d` (input samples), unit DC gain.

    `cutoff` is the passband edge as a fraction of the input Nyquist.
    """
    r = np.clip(d / half_width, -1.0, 1.0)
    window = np.i0(_KAISER_BETA * np.sqrt(1.0 - r * r)) / np.i0(_KAISER_BETA)
    return np.where(np.abs(d) < half_width, cutoff * np.sinc(cutoff * d) * window, 0.0)


def _resample_polyphase(x: np.ndarray, up: int, down: int, n_out: int, cutoff: float,
                        half_width: float, pad: int) -> np.ndarray:
    """Rational-ratio resampling: output n = b*up + j sits at input b*down + j*down/up.

    One kernel row per phase j; each block b is a length-K window of the padded
    input starting at b*down, so the whole thing is a strided (blocks, K) @ (K, up).
    """
    k = down + 2 * pad
    taps = np.arange(k) - pad  # input offset of each column relative to b*down
    phases = np.arange(up) * (down / up)
    kernel_t = _kaiser_sinc(phases[None, :] - taps[:, None], cutoff, half_width)  # (K, up)
    n_blocks = -(-n_out // up)
    total = (n_blocks - 1) * down + k
    xpad = np.zeros(max(total, pad + x.size), dtype=np.float64)
    xpad[pad : pad + x.size] = x
    windows = np.lib.stride_tricks.sliding_window_view(xpad, k)[::down][:n_blocks]
    step = max(1, _BLOCK_ELEMS // k)
    out = np.empty((n_blocks, up), dtype=np.float64)
    for s in range(0, n_blocks, step):
        out[s : s + step] = windows[s : s + step] @ kernel_t
    return out.ravel()[:n_out]


def _resample_direct(x: np.ndarray, ratio: float, n_out: int, cutoff: float,
                     half_width: float, pad: int) -> np.ndarray:
    """Arbitrary-ratio resampling: evaluate the kernel per output sample.

    Slower than the polyphase table but needs no table, so it handles ratios with
    huge reduced terms (e.g. 44101 -> 16000) and non-integer rates.
    """
    xpad = np.zeros(x.size + 2 * pad + 1, dtype=np.float64)
    xpad[pad : pad + x.size] = x
    offs = np.arange(-pad, pad + 1)
    out = np.empty(n_out, dtype=np.float64)
    step = max(1, _BLOCK_ELEMS // offs.size)
    for s in range(0, n_out, step):
        pos = np.arange(s, min(s + step, n_out)) * ratio  # output positions, input samples
        idx = np.floor(pos).astype(np.int64)[:, None] + offs[None, :]
        h = _kaiser_sinc(pos[:, None] - idx, cutoff, half_width)
        out[s : s + pos.size] = np.einsum("ij,ij->i", h, xpad[idx + pad])
    return out


def resample(samples: np.ndarray, orig_sr: int | float, target_sr: int | float = SAMPLE_RATE
             ) -> np.ndarray:
    """Band-limited resampling of mono `samples` (N,) -> float32 (ceil(N*target/orig),).

    Kaiser-windowed sinc interpolation (polyphase for rational ratios), numpy only.
    The signal is treated as zero outside [0, N), so any length works (even 1
    sample). Identity (float32 copy) when the rates are equal.
    """
    x = np.asarray(samples)
    if x.ndim != 1:
        raise AudioError(f"resample expects mono samples of shape (N,), got shape {x.shape}")
    for name, sr in (("orig_sr", orig_sr), ("target_sr", target_sr)):
        if not isinstance(sr, (int, float, np.integer, np.floating)) or not (
            math.isfinite(float(sr)) and float(sr) > 0
        ):
            raise AudioError(f"{name} must be a positive number, got {sr!r}")
    x = x.astype(np.float64)
    if float(orig_sr) == float(target_sr):
        return x.astype(np.float32)
    if x.size == 0:
        return np.zeros(0, dtype=np.float32)

    cutoff = _ROLLOFF * min(1.0, float(target_sr) / float(orig_sr))
    half_width = _ZERO_CROSSINGS / cutoff  # in input samples
    pad = int(math.ceil(half_width)) + 1
    if float(orig_sr).is_integer() and float(target_sr).is_integer():
        frac = Fraction(int(target_sr), int(orig_sr))
        up, down = frac.numerator, frac.denominator
        n_out = -(-x.size * up // down)
        if up * (down + 2 * pad) <= _MAX_POLYPHASE_TABLE:
            y = _resample_polyphase(x, up, down, n_out, cutoff, half_width, pad)
            return y.astype(np.float32)
    else:
        n_out = math.ceil(x.size * float(target_sr) / float(orig_sr) - 1e-9)
    y = _resample_direct(x, float(orig_sr) / float(target_sr), n_out, cutoff, half_width, pad)
    return y.astype(np.float32)


def load_audio(path: str | os.PathLike, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Load an audio file as validated float32 mono at `sample_rate` (default 16 kHz), (N,)."""
    samples, sr = load_wav(path)
    samples = check_audio(samples, sr)
    return resample(samples, sr, sample_rate)
