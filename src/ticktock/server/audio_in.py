"""Audio in: `audio.append` frames (base64 PCM16 / float32, declared rate, any size) -> 1 s chunks at 16 kHz.

A bad frame raises `ProtocolError` and changes nothing: the samples already
buffered stay, so the session goes on as if the frame had not been sent.
"""

from __future__ import annotations

import base64
import binascii

import numpy as np

from ..audio import SAMPLE_RATE
from ..audio.io import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE
from .wire import BAD_AUDIO, BAD_SAMPLE_RATE, FRAME_TOO_LONG, AudioAppend, ProtocolError, quote
from .resampler import StreamResampler

MAX_FRAME_SECONDS = 10.0


def decode_frame(msg: AudioAppend) -> tuple[np.ndarray, int]:
    """(mono float32 samples (N,), sample rate) of one frame, validated."""
    rate = check_rate(msg.sample_rate)
    try:
        raw = base64.b64decode(msg.audio, validate=True)
    except (binascii.Error, ValueError) as err:
        raise ProtocolError(BAD_AUDIO, f"audio is not valid base64: {err}") from None
    width = 2 if msg.format == "pcm16" else 4
    if len(raw) == 0 or len(raw) % (width * msg.channels):
        raise ProtocolError(BAD_AUDIO, f"{len(raw)} bytes is not a whole number of {msg.format} frames "
                                       f"of {msg.channels} channel(s) ({width * msg.channels} bytes each)")
    n = len(raw) // (width * msg.channels)
    if n / rate > MAX_FRAME_SECONDS:
        raise ProtocolError(FRAME_TOO_LONG, f"frame of {n / rate:.1f} s exceeds the {MAX_FRAME_SECONDS:.0f} s limit: "
                                            "send audio in shorter frames (e.g. 20-200 ms)")
    if msg.format == "pcm16":
        x = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    else:
        x = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        if not np.all(np.isfinite(x)):
            raise ProtocolError(BAD_AUDIO, "audio contains NaN or infinite samples; the frame was dropped")
    if msg.channels > 1:
        x = x.reshape(n, msg.channels).mean(axis=1, dtype=np.float32)
    return x, rate


def check_rate(rate: object) -> int:
    """A frame's `sample_rate` as whole Hz in [8 kHz, 192 kHz]; compared before float(), which 10**400 overflows."""
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise ProtocolError(BAD_SAMPLE_RATE, f"unsupported sample rate {quote(rate)} (supported: 8 kHz to 192 kHz)")
    if rate != int(rate):
        raise ProtocolError(BAD_SAMPLE_RATE, f"sample_rate must be a whole number of Hz, got {rate!r}")
    return int(rate)


class AudioIn:
    """Buffers a session's audio: frames in, complete chunks of `chunk_samples` at 16 kHz out."""

    def __init__(self, chunk_samples: int = SAMPLE_RATE):
        self.chunk_samples = chunk_samples
        self.rate: int | None = None  # fixed by the first frame
        self.resampler: StreamResampler | None = None
        self.buf = np.zeros(0, dtype=np.float32)  # 16 kHz samples not yet in a chunk
        self.samples_in = 0  # 16 kHz samples accepted so far

    def push(self, msg: AudioAppend) -> list[np.ndarray]:
        x, rate = decode_frame(msg)
        if self.rate is None:
            self.rate, self.resampler = rate, StreamResampler(rate)
        elif rate != self.rate:
            raise ProtocolError(BAD_SAMPLE_RATE, f"sample_rate changed from {self.rate} to {rate} within a session; "
                                                 "start a new session to change it")
        self.resampler.push(x)
        # resample only when a chunk can be completed: one resampler call per chunk, not per frame
        if len(self.buf) + self.resampler.pending_output() >= self.chunk_samples:
            self._take(self.resampler.pull())
        return self._chunks()

    def held_bytes(self) -> int:
        """Bytes of audio held and not yet in a chunk: the partial chunk and the input awaiting resampling."""
        return 4 * (len(self.buf) + (len(self.resampler.buf) if self.resampler else 0))  # float32

    def buffered_seconds(self) -> float:
        """Audio received towards the next chunk (seconds at 16 kHz, including samples awaiting resampling)."""
        pending = (self.resampler.received - self.resampler.emitted) * SAMPLE_RATE / self.rate if self.resampler else 0
        return (len(self.buf) + max(0, pending)) / SAMPLE_RATE

    def flush(self) -> list[np.ndarray]:
        """The end of the stream: the remaining chunks, the last one zero-padded (nothing if no samples remain)."""
        if self.resampler is not None:
            self._take(self.resampler.flush())
        chunks = self._chunks()
        if len(self.buf):
            chunks.append(np.pad(self.buf, (0, self.chunk_samples - len(self.buf))))
            self.buf = np.zeros(0, dtype=np.float32)
        return chunks

    def _take(self, y: np.ndarray) -> None:
        self.buf = np.concatenate([self.buf, y])
        self.samples_in += len(y)

    def _chunks(self) -> list[np.ndarray]:
        n = len(self.buf) // self.chunk_samples
        out = [self.buf[i * self.chunk_samples:(i + 1) * self.chunk_samples].copy() for i in range(n)]
        self.buf = self.buf[n * self.chunk_samples:]
        return out
