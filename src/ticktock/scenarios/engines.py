"""One renderer interface over the speech engines: `words(words, voice) -> {word: 16 kHz clip}`, and for an
engine that can say whole utterances with word times, `utterances(texts, voice) -> {text: (clip, word times)}`.

`Engines` routes each voice to its engine's renderer (`voices.engine_of`), creating it on first use, so a
session may mix engines and a worker holds one renderer (and one clip cache) per engine.
"""

from __future__ import annotations

from typing import Iterable, Protocol

import numpy as np

from .voices import Voice, engine_of


class Renderer(Protocol):
    def words(self, words: Iterable[str], voice: Voice) -> dict[str, np.ndarray]: ...
    # optional: `utterances(texts, voice) -> {text: (clip (n,), [(start_s, end_s)] per spoken word)}`, the texts
    # it could time (the rest are rendered word by word)


def make_renderer(engine: str) -> Renderer:
    if engine == "espeak":
        from .espeak import EspeakRenderer
        return EspeakRenderer()
    if engine == "festival":
        from .festival import FestivalRenderer
        return FestivalRenderer()
    if engine == "flite":
        from .flite import FliteRenderer
        return FliteRenderer()
    if engine == "pico":
        from .pico import PicoRenderer
        return PicoRenderer()
    if engine == "sam":
        from .sam import SamRenderer
        return SamRenderer()
    raise ValueError(f"unknown speech engine {engine!r}")


class Engines:
    """A Renderer for voices of any engine."""

    def __init__(self, **renderers: Renderer) -> None:
        self.renderers: dict[str, Renderer] = dict(renderers)

    def _for(self, voice: Voice) -> Renderer:
        engine = engine_of(voice.name)
        if engine not in self.renderers:
            self.renderers[engine] = make_renderer(engine)
        return self.renderers[engine]

    def words(self, words: Iterable[str], voice: Voice) -> dict[str, np.ndarray]:
        return self._for(voice).words(words, voice)

    def utterances(self, texts: list[str], voice: Voice) -> dict[str, tuple[np.ndarray, list[tuple[float, float]]]]:
        """The texts said in one go with word times, where the voice's engine can (none where it cannot)."""
        say = getattr(self._for(voice), "utterances", None)
        return say(texts, voice) if say is not None else {}
