"""Split a signal into the fixed-length chunks the duplex model consumes."""

from __future__ import annotations

import numpy as np

from .errors import AudioError
from .io import SAMPLE_RATE


def split_chunks(
    samples: np.ndarray, sample_rate: int = SAMPLE_RATE, chunk_seconds: float = 1.0
) -> list[np.ndarray]:
    """Cut `samples` (N,) into chunks of exactly round(chunk_seconds * sample_rate).

    The last partial chunk is zero-padded (trailing silence), so every chunk has
    the same length. Returns a list of ceil(N / chunk_len) arrays of shape
    (chunk_len,), same dtype as the input.
    """
    samples = np.asarray(samples)
    if samples.ndim != 1:
        raise AudioError(f"expected mono samples of shape (N,), got shape {samples.shape}")
    if samples.size == 0:
        raise AudioError("cannot split empty audio (0 samples) into chunks")
    chunk_len = int(round(chunk_seconds * sample_rate))
    if chunk_len <= 0:
        raise AudioError(
            f"chunk length must be positive, got {chunk_seconds} s at {sample_rate} Hz"
        )
    n_chunks = -(-samples.size // chunk_len)
    padded = np.zeros(n_chunks * chunk_len, dtype=samples.dtype)
    padded[: samples.size] = samples
    return list(padded.reshape(n_chunks, chunk_len))


def speech_end(samples: np.ndarray, sample_rate: int = SAMPLE_RATE, frame_s: float = 0.02,
               floor_db: float = -35.0) -> float:
    """Seconds from the start of `samples` (N,) to the end of the last frame within `floor_db` of the loudest
    frame (RMS over `frame_s` frames): where the last speech ends in a plain recording. 0.0 for silence."""
    samples = np.asarray(samples, dtype=np.float32)
    n = max(1, int(round(frame_s * sample_rate)))
    frames = samples[: samples.size // n * n].reshape(-1, n)
    if frames.size == 0:
        return 0.0
    rms = np.sqrt((frames.astype(np.float64) ** 2).mean(axis=1))  # (frames,)
    if rms.max() <= 0:
        return 0.0
    loud = np.flatnonzero(rms >= rms.max() * 10 ** (floor_db / 20))
    return float((loud[-1] + 1) * n / sample_rate)
