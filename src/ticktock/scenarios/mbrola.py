"""MBROLA's diphone voices (Debian contrib `mbrola`, `mbrola-us1` …) spoken through espeak-ng (`-v mb-us1`):
espeak-ng's phonemes and prosody in a speaker's recorded diphones, not in its formants.

espeak-ng starts the `mbrola` binary (on PATH) and reads a voice's database from /usr/share/mbrola/ only. Only word
by word: espeak-ng's library speaks an MBROLA voice at the voice's own sample rate, not the one its connected-speech
timings (`espeak_connected`) assume.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .voices import MBROLA_TRAIN_VOICES

DATABASES = Path("/usr/share/mbrola")  # compiled into espeak-ng


def is_mbrola(name: str) -> bool:
    """Whether an espeak-ng voice name is an MBROLA voice ('mb-us1')."""
    return name.startswith("mb-")


def mbrola_voices() -> tuple[str, ...]:
    """MBROLA_TRAIN_VOICES that espeak-ng can speak here: the binary on PATH and each voice's database installed."""
    if shutil.which("mbrola") is None:
        return ()
    return tuple(v for v in MBROLA_TRAIN_VOICES if (DATABASES / v[3:] / v[3:]).is_file())
