"""Word audio from SVOX Pico (`pico2wave`, Debian non-free `libttspico-utils`): an HMM synthesizer of its own
lineage, American and British English, one word at a time (`wordwise`): Pico gives no word timings.

pico2wave reads its voices from /usr/share/pico/lang only and takes one text per process; its own markup
`<speed level='N'>` (100: its normal rate) sets the speaking rate. Binary: $TICKTOCK_PICO, else `pico2wave` on
PATH.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .binaries import engine_binary
from .text import NOMINAL_RATE
from .voices import Voice, engine_voice
from .wordwise import WordByWord

LANG_DIR = Path("/usr/share/pico/lang")  # compiled into pico2wave


class PicoError(RuntimeError):
    pass


def pico_binary() -> str | None:
    return engine_binary("TICKTOCK_PICO", "pico2wave")


def pico_languages() -> set[str]:
    """The languages Pico can speak here ('en-US', ...): those with both of their files installed."""
    if pico_binary() is None or not LANG_DIR.is_dir():
        return set()
    names = [p.name for p in LANG_DIR.glob("*.bin")]
    return {n[:5] for n in names if n.endswith("_ta.bin") and any(m.startswith(n[:5]) and m.endswith("_sg.bin")
                                                                 for m in names)}


class PicoRenderer(WordByWord):
    def __init__(self, cache_size: int = 4096) -> None:
        super().__init__(cache_size)
        binary = pico_binary()
        if binary is None:
            raise PicoError("pico2wave not found: install libttspico-utils (Debian non-free) or set TICKTOCK_PICO")
        self.binary = binary

    def synth(self, words: list[str], voice: Voice, folder: Path) -> list[tuple[float, float] | None]:
        speed = round(100 * voice.rate / NOMINAL_RATE)
        for i, w in enumerate(words):
            proc = subprocess.run([self.binary, "-l", engine_voice(voice.name), "-w", str(folder / f"{i}.wav"),
                                   f"<speed level='{speed}'>{w}</speed>"], capture_output=True)
            if proc.returncode != 0 or not (folder / f"{i}.wav").is_file():
                raise PicoError(f"pico2wave failed on {w!r} in {voice.name}: {proc.stderr.decode()[:300]}")
        return [None] * len(words)  # Pico's silences are clean: the voiced frames find each word
