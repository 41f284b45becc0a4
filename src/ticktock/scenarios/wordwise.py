"""Word clips from engines that give no word timings: every word synthesized on its own.

A word rendered alone is one clip that holds the word and silence, so its start and end on the session
timeline are exact once the silence is cut. The engine says where (festival: its segments, a word's
bounds being the ends of the pauses around it), else the voiced frames do (as for espeak-ng). The clip is
resampled to 16 kHz and cached like espeak-ng's (`clips.ClipCache`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Iterable

import numpy as np
import soundfile as sf

from .clips import ClipCache
from .espeak import resample_fft, voiced_segments
from .voices import Voice


class WordByWord:
    """Base of the word-by-word renderers: `synth(words, voice, folder)` writes folder/<i>.wav per word and
    returns each word's span (start, end) in seconds within it, or None where the voiced frames decide."""

    def __init__(self, cache_size: int = 4096) -> None:
        self.cache = ClipCache(cache_size)
        self.calls = 0  # engine processes started

    def synth(self, words: list[str], voice: Voice, folder: Path) -> list[tuple[float, float] | None]:
        raise NotImplementedError

    def _render(self, words: list[str], voice: Voice) -> dict[str, np.ndarray]:
        with tempfile.TemporaryDirectory(prefix="ticktock-words-") as d:
            spans = self.synth(words, voice, Path(d))
            self.calls += 1
            out = {}
            for i, (w, span) in enumerate(zip(words, spans)):
                x, sr = sf.read(Path(d) / f"{i}.wav", dtype="float32")
                x = x if x.ndim == 1 else x.mean(1)
                if span is None:
                    a, b = (voiced_segments(x, sr, min_silence_s=float("inf")) or [(0, min(len(x), 1))])[0]
                else:
                    a, b = int(round(span[0] * sr)), max(int(round(span[0] * sr)) + 1, int(round(span[1] * sr)))
                out[w] = resample_fft(x[a:b], sr)
        return out

    def words(self, words: Iterable[str], voice: Voice) -> dict[str, np.ndarray]:
        """Clips (16 kHz float32, (n,)) of the distinct `words` in `voice`; one engine run for those not cached."""
        return self.cache.fetch(words, voice, self._render)
