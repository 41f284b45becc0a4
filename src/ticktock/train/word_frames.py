"""Frame-level word targets for the audio encoder: a dense, exactly aligned listening objective.

docs/design.md §5a: the LM's output loss alone reaches the encoder too sparsely to teach it
words. The renderer knows every word's start and end, so each inner encoder frame
(e.g. 50 ms) gets a class: the user word being spoken then, `BACKGROUND` for another
talker, `SILENCE` otherwise. A linear head on the encoder's inner frames is trained on
these with cross-entropy (training only; the head is not part of the shipped model).
"""

from __future__ import annotations

import functools
import zlib

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SILENCE, BACKGROUND, FIRST_WORD = 0, 1, 2
IGNORE = -100
OOV_BUCKETS = 512  # words outside the corpus sample (e.g. rare numbers) hash into these classes


@functools.lru_cache(maxsize=1)
def word_vocab() -> dict[str, int]:
    """Every word the world can speak -> class id (FIRST_WORD + rank in sorted order)."""
    from ..scenarios import corpus_texts
    from ..scenarios.text import spoken_words

    words = sorted({w for t in corpus_texts() for w in spoken_words(t)})
    return {w: FIRST_WORD + i for i, w in enumerate(words)}


def n_classes() -> int:
    return FIRST_WORD + len(word_vocab()) + OOV_BUCKETS


def word_class(word: str, vocab: dict[str, int]) -> int:
    """The word's class; an unseen word gets a stable hash bucket (crc32, not Python's salted hash)."""
    if word in vocab:
        return vocab[word]
    return FIRST_WORD + len(vocab) + zlib.crc32(word.encode()) % OOV_BUCKETS


def frame_labels(words: list[dict], u0: int, n_units: int, inner_per_chunk: int,
                 vocab: dict[str, int], chunk_s: float = 1.0) -> np.ndarray:
    """Class per inner frame of units [u0, u0 + n_units): (n_units * inner_per_chunk,) int64.

    A frame takes the word whose [start, end) holds the frame's centre.
    """
    n = n_units * inner_per_chunk
    step = chunk_s / inner_per_chunk
    centres = u0 * chunk_s + (np.arange(n) + 0.5) * step
    out = np.full(n, SILENCE, dtype=np.int64)
    for w in words:
        lo, hi = np.searchsorted(centres, [w["start"], w["end"]])
        if hi > lo:
            user = w.get("speaker", "user") == "user"
            out[lo:hi] = word_class(w["word"], vocab) if user else BACKGROUND
    return out


class WordFrameHead(nn.Module):
    """Linear classifier over the encoder's inner frames (training only)."""

    def __init__(self, width: int, n_classes: int):
        super().__init__()
        self.proj = nn.Linear(width, n_classes)

    def loss(self, inner: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, dict]:
        """inner (N, width), labels (N,) with IGNORE padding -> (CE, {frame_acc, word_frame_acc})."""
        keep = labels != IGNORE
        logits = self.proj(inner[keep].float())
        y = labels[keep]
        loss = F.cross_entropy(logits, y)
        with torch.no_grad():
            hit = logits.argmax(-1) == y
            words = y >= FIRST_WORD
            stats = {"frame_acc": hit.float().mean(),
                     "word_frame_acc": hit[words].float().mean() if words.any() else hit.new_zeros((), dtype=torch.float)}
        return loss, stats
