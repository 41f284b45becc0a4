"""An LRU cache of word clips shared by the speech engines: clips kept as int16, handed out as float32."""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Iterable

import numpy as np

from .voices import Voice

RenderWords = Callable[[list[str], Voice], dict[str, np.ndarray]]


class ClipCache:
    """Clips keyed by (word, voice name, rate, pitch); the oldest dropped beyond `size`."""

    def __init__(self, size: int = 4096) -> None:
        self.clips: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self.size = size

    def fetch(self, words: Iterable[str], voice: Voice, render: RenderWords) -> dict[str, np.ndarray]:
        """Clips (16 kHz float32, (n,)) of the distinct `words`; one `render` call for those not yet cached."""
        key = lambda w: (w, voice.name, voice.rate, voice.pitch)  # noqa: E731
        wanted = sorted(set(words))
        missing = [w for w in wanted if key(w) not in self.clips]
        if missing:
            for w, clip in render(missing, voice).items():
                self.clips[key(w)] = (np.clip(clip, -1, 1) * 32767).astype(np.int16)
        out = {}
        for w in wanted:
            self.clips.move_to_end(key(w))
            out[w] = self.clips[key(w)].astype(np.float32) / 32767
        while len(self.clips) > self.size:
            self.clips.popitem(last=False)
        return out
