"""Word audio from flite (CMU's voices: the outside check, never in training), one word at a time (`wordwise`).

flite takes one text per process; its --setf duration_stretch sets the speaking rate. Binary:
$TICKTOCK_FLITE, else `flite` on PATH.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .binaries import engine_binary
from .text import NOMINAL_RATE
from .voices import Voice, engine_voice
from .wordwise import WordByWord


class FliteError(RuntimeError):
    pass


def flite_binary() -> str | None:
    return engine_binary("TICKTOCK_FLITE", "flite")


class FliteRenderer(WordByWord):
    def __init__(self, cache_size: int = 4096) -> None:
        super().__init__(cache_size)
        binary = flite_binary()
        if binary is None:
            raise FliteError("flite not found: install it or set TICKTOCK_FLITE")
        self.binary = binary

    def synth(self, words: list[str], voice: Voice, folder: Path) -> list[tuple[float, float] | None]:
        for i, w in enumerate(words):
            proc = subprocess.run([self.binary, "-voice", engine_voice(voice.name), "--setf",
                                   f"duration_stretch={NOMINAL_RATE / voice.rate:.4f}", "-t", w, "-o",
                                   str(folder / f"{i}.wav")], capture_output=True)
            if proc.returncode != 0:
                raise FliteError(f"flite failed on {w!r} in {voice.name}: {proc.stderr.decode()[:300]}")
        return [None] * len(words)  # flite's silences are clean: the voiced frames find each word
