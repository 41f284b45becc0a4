"""Word audio from espeak-ng: batch-rendered, split on silence, resampled to 16 kHz, cached.

All words a session needs (for one voice) are rendered in ONE espeak-ng call, separated by
SSML breaks, then split at the silences; so each word's clip, and hence its start and
end on the session timeline, is known exactly. If the split does not give one segment per
word, the batch is halved and each half rendered again. Clips are cached in an LRU keyed by
(word, voice, rate, pitch). espeak-ng is deterministic, but a word rendered inside a batch
can differ by a fraction of a millisecond from the same word in another batch, so audio
is bit-reproducible for a fresh renderer (empty cache) rather than across cache states.

Binary and data folder: arguments, else $TICKTOCK_ESPEAK / $TICKTOCK_ESPEAK_DATA, else
`espeak-ng` on PATH with its default data (on the GPU machine: /tmp/esp/usr/bin/espeak-ng
with --path=/tmp/esp/usr/lib/x86_64-linux-gnu).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Iterable
from xml.sax.saxutils import escape

import numpy as np

from ..audio.io import SAMPLE_RATE
from .clips import ClipCache
from .voices import Voice

BREAK_MS = 500  # SSML break between the words of a batch (a plain -g gap lets "of the" merge)
FRAME_S = 0.01  # silence detection frame
SILENCE_DB = -45.0  # a frame is silent below this level relative to the loudest frame
MIN_SILENCE_S = 0.15  # shorter silences are inside a word
EDGE_S = 0.005  # kept around a word's voiced frames


class EspeakError(RuntimeError):
    pass


def espeak_command(binary: str | None = None, data_path: str | None = None) -> list[str] | None:
    """The base command (binary [+ --path=DATA]), or None if espeak-ng cannot be found."""
    binary = binary or os.environ.get("TICKTOCK_ESPEAK") or shutil.which("espeak-ng")
    if not binary or not (os.path.isfile(binary) or shutil.which(binary)):
        return None
    data_path = data_path or os.environ.get("TICKTOCK_ESPEAK_DATA")
    return [binary] + ([f"--path={data_path}"] if data_path else [])


def espeak_available(binary: str | None = None, data_path: str | None = None) -> bool:
    return espeak_command(binary, data_path) is not None


def _smooth_len(n: int) -> int:
    """The smallest 2-3-5-smooth integer >= n (fast FFT sizes)."""
    while True:
        m = n
        for p in (2, 3, 5):
            while m % p == 0:
                m //= p
        if m == 1:
            return n
        n += 1


def resample_fft(x: np.ndarray, sr_in: int, sr_out: int = SAMPLE_RATE) -> np.ndarray:
    """Band-limited FFT resampling of a short clip (N,) that starts and ends near silence.

    The clip is zero-padded to a length that maps to a whole number of output samples
    (and a fast FFT size); the result keeps round(N * sr_out / sr_in) samples. A local
    resampler because `ticktock.audio.resample` costs ~40 ms per call (table set-up), which
    would dominate per-word rendering.
    """
    if sr_in == sr_out:
        return x.astype(np.float32)
    g = np.gcd(sr_in, sr_out)
    up, down = sr_out // g, sr_in // g
    n = down * _smooth_len(-(-len(x) // down))
    m = n // down * up
    spec = np.fft.rfft(x, n)
    out_spec = np.zeros(m // 2 + 1, dtype=spec.dtype)
    k = min(len(spec), len(out_spec))
    out_spec[:k] = spec[:k]
    y = np.fft.irfft(out_spec, m) * (m / n)
    return y[: int(round(len(x) * sr_out / sr_in))].astype(np.float32)


def cut_utterance(x: np.ndarray, sr: int, spans: list[tuple[float, float]]) -> tuple[np.ndarray, list] | None:
    """An utterance said in one go, x (n,) at `sr`, with its words' (start, end) in seconds: the 16 kHz clip from
    the first word's start to the last one's end and the spans relative to it; None unless the spans run forwards."""
    if not spans or spans[-1][0] >= spans[-1][1] or not all(a < b <= c for (a, b), (c, _) in zip(spans, spans[1:])):
        return None
    t0 = spans[0][0]
    clip = resample_fft(x[int(round(t0 * sr)):int(round(spans[-1][1] * sr))], sr)
    return clip, [(a - t0, b - t0) for a, b in spans]


def _parse_wav(data: bytes) -> tuple[np.ndarray, int]:
    """espeak-ng's streamed WAV (sizes unset) -> float32 samples, sample rate."""
    if data[:4] != b"RIFF" or b"data" not in data[:200]:
        raise EspeakError("espeak-ng did not write a WAV stream")
    sr = int.from_bytes(data[24:28], "little")
    start = data.index(b"data", 12) + 8
    pcm = np.frombuffer(data[start: start + (len(data) - start) // 2 * 2], dtype="<i2")
    return pcm.astype(np.float32) / 32768.0, sr


def voiced_segments(x: np.ndarray, sr: int, min_silence_s: float = MIN_SILENCE_S) -> list[tuple[int, int]]:
    """Sample ranges [a, b) of sound separated by silences of at least `min_silence_s`."""
    n = int(sr * FRAME_S)
    m = len(x) // n
    if m == 0:
        return []
    energy = np.sqrt((x[: m * n].reshape(m, n) ** 2).mean(1) + 1e-12)
    voiced = 20 * np.log10(energy / energy.max()) > SILENCE_DB
    idx = np.flatnonzero(voiced)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) > min_silence_s / FRAME_S)
    starts = np.r_[idx[0], idx[breaks + 1]]
    ends = np.r_[idx[breaks], idx[-1]] + 1
    pad = int(EDGE_S * sr)
    return [(max(0, a * n - pad), min(len(x), b * n + pad)) for a, b in zip(starts, ends)]


class EspeakRenderer:
    """Renders words to 16 kHz float32 clips with an LRU cache of `cache_size` clips."""

    def __init__(self, binary: str | None = None, data_path: str | None = None,
                 cache_size: int = 4096) -> None:
        cmd = espeak_command(binary, data_path)
        if cmd is None:
            raise EspeakError("espeak-ng not found: install it or set TICKTOCK_ESPEAK")
        self.cmd = cmd
        self.data_path = data_path
        self.cache = ClipCache(cache_size)
        self.calls = 0  # espeak-ng processes started
        self._connected = None  # the library, for whole utterances (`utterance`), loaded on first use

    def synth(self, text: str, voice: Voice, ssml: bool = False) -> tuple[np.ndarray, int]:
        """One espeak-ng call: (samples float32, sample rate)."""
        cmd = [*self.cmd, "--stdout", "-v", voice.name, "-s", str(voice.rate), "-p", str(voice.pitch)]
        if ssml:
            cmd.append("-m")
        self.calls += 1
        proc = subprocess.run(cmd, input=text.encode(), capture_output=True)
        if proc.returncode != 0:
            raise EspeakError(f"espeak-ng failed ({proc.returncode}): {proc.stderr.decode()[:300]}")
        return _parse_wav(proc.stdout)

    def _render(self, words: list[str], voice: Voice) -> dict[str, np.ndarray]:
        """Clips of distinct `words`: one call, split on silence; on a miscount, halve and retry."""
        brk = f' <break time="{BREAK_MS}ms"/> '
        x, sr = self.synth(f"<speak>{brk.join(escape(w) for w in words)}</speak>", voice, ssml=True)
        if len(words) == 1:  # everything voiced is the word, even across a long inner pause
            segs = voiced_segments(x, sr, min_silence_s=float("inf")) or [(0, min(len(x), 1))]
        else:
            segs = voiced_segments(x, sr)
        if len(segs) != len(words):
            mid = len(words) // 2
            return {**self._render(words[:mid], voice), **self._render(words[mid:], voice)}
        return {w: resample_fft(x[a:b], sr) for w, (a, b) in zip(words, segs)}

    def words(self, words: Iterable[str], voice: Voice) -> dict[str, np.ndarray]:
        """Clips (16 kHz float32, (n,)) of the distinct `words` in `voice`; one espeak-ng call
        for all the words not yet cached."""
        return self.cache.fetch(words, voice, self._render)

    def utterances(self, texts: list[str], voice: Voice) -> dict[str, tuple[np.ndarray, list[tuple[float, float]]]]:
        """Each text said in one go, with its words' times (`espeak_connected`); a text whose times are not known
        is left out."""
        from .mbrola import is_mbrola

        if is_mbrola(voice.name):  # its library output is at the MBROLA voice's rate: word by word (`mbrola`)
            return {}
        if self._connected is None:
            from .espeak_connected import ConnectedEspeak
            self._connected = ConnectedEspeak(self.data_path)
        said = {t: self._connected.utterance(t, voice) for t in dict.fromkeys(texts)}
        return {t: got for t, got in said.items() if got is not None}
