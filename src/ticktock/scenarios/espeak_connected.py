"""Connected speech from espeak-ng: a whole utterance in one breath, with every word's time from the synthesizer.

Word-by-word rendering (`espeak.EspeakRenderer`) gives exact word times but isolated words: no coarticulation,
no sentence prosody. A model trained only on those fails on the same sentence said in one go (a bare
`espeak-ng -w q.wav "what is seven times eight"`). Here the utterance is synthesised whole through
libespeak-ng, whose event callback reports where each word and each phoneme starts, in samples of the audio
it produced, so the word times stay exact:

    clip, times = ConnectedEspeak().utterance("what is the capital of france?", Voice("en-us+m3", 170, 50))
    clip     # float32 (n,) at 16 kHz, from the first word's start to the last word's end
    times    # [(start_s, end_s)] per spoken word (`text.spoken_words`), relative to the clip

A word starts at its word event; it ends where the first sound after its last phoneme starts (a pause, the next
word's first phoneme) and never after the next word's start. espeak-ng says an unstressed word together with the
next under one word event ("of the week"); such a group's phonemes are shared out by each word's phoneme count
said alone. Where the events do not account for every word that way, `utterance` returns None and the caller
renders the utterance word by word.

The library keeps its synthesizer's state from one utterance to the next (no call resets it), so the same text
can come out a few samples longer or shorter, its word times moving by as much: a suite said in one go is
reproducible to that, not to the bit (word-by-word rendering is, for a fresh renderer).

Library and data: `$TICKTOCK_ESPEAK_LIB`, else libespeak-ng.so.1 in the data folder `$TICKTOCK_ESPEAK_DATA` (where
the GPU kit unpacks both, scripts/gpu_env.sh), else the system's; the data folder as `espeak.espeak_command`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .espeak import EspeakError, cut_utterance
from .text import speakable
from .voices import Voice

_SYNCHRONOUS, _PHONEME_EVENTS = 2, 1  # espeak_AUDIO_OUTPUT, espeak_Initialize options
_EVENT_END_OF_LIST, _EVENT_WORD, _EVENT_PHONEME = 0, 1, 7
_RATE, _PITCH = 1, 3  # espeak_PARAMETER
_POS_CHARACTER, _CHARS_UTF8 = 1, 1
# marks that are no sound of a word's own: pauses ("_", "_:"), the syllable mark ";", and linking r ("r-", said
# between "for" and "a" only when they run together), so they do not count when a group is shared out
_NOT_COUNTED = ("_", ";", "r-")


class _Event(ctypes.Structure):  # espeak_EVENT (speak_lib.h)
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", ctypes.c_char * 8)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


@dataclass(frozen=True)
class Mark:
    """One event of a synthesis: a word's or a phoneme's start."""

    sample: int  # in the synthesizer's own sample rate
    position: int  # 1-based character position in the text
    phoneme: str | None  # None for a word event; pauses start with "_"


def _load_library() -> ctypes.CDLL:
    beside_data = os.path.join(os.environ.get("TICKTOCK_ESPEAK_DATA", ""), "libespeak-ng.so.1")  # the GPU kit's
    path = (os.environ.get("TICKTOCK_ESPEAK_LIB") or (beside_data if os.path.isfile(beside_data) else None)
            or ctypes.util.find_library("espeak-ng") or "libespeak-ng.so.1")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise EspeakError(f"libespeak-ng not found ({e}); install libespeak-ng1 or set TICKTOCK_ESPEAK_LIB") from None


class ConnectedEspeak:
    """Whole utterances from libespeak-ng with word times. The library is one per process; instances share it, each
    synthesis pointing its one callback back at its own instance."""

    def __init__(self, data_path: str | None = None) -> None:
        self.lib = _load_library()
        data = data_path or os.environ.get("TICKTOCK_ESPEAK_DATA")
        self.sample_rate = self.lib.espeak_Initialize(_SYNCHRONOUS, 0, data.encode() if data else None,
                                                      _PHONEME_EVENTS)
        if self.sample_rate <= 0:
            raise EspeakError(f"libespeak-ng failed to start (data folder {data or 'default'})")
        self._pcm: list[np.ndarray] = []
        self._marks: list[Mark] = []
        self._phonemes: dict[tuple[str, str], int] = {}  # (word, voice base) -> phonemes said alone
        self._callback = _CALLBACK(self._collect)  # kept: the library calls it for as long as it lives

    def _collect(self, wav, n: int, events) -> int:
        if n > 0:
            self._pcm.append(np.ctypeslib.as_array(wav, (n,)).copy())
        i = 0
        while events[i].type != _EVENT_END_OF_LIST:
            e = events[i]
            if e.type in (_EVENT_WORD, _EVENT_PHONEME):
                name = bytes(e.id).split(b"\0")[0].decode("ascii", "replace") if e.type == _EVENT_PHONEME else None
                self._marks.append(Mark(e.sample, e.text_position, name))
            i += 1
        return 0

    def synth(self, text: str, voice: Voice) -> tuple[np.ndarray, list[Mark]]:
        """(samples float32 at `sample_rate`, the word and phoneme events in order)."""
        self.lib.espeak_SetSynthCallback(self._callback)  # the library holds one: another instance may have set its own
        if self.lib.espeak_SetVoiceByName(voice.name.encode()) != 0:
            raise EspeakError(f"espeak-ng has no voice {voice.name!r}")
        self.lib.espeak_SetParameter(_RATE, voice.rate, 0)
        self.lib.espeak_SetParameter(_PITCH, voice.pitch, 0)
        self._pcm, self._marks = [], []
        raw = text.encode()
        err = self.lib.espeak_Synth(ctypes.c_char_p(raw), len(raw) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        if err != 0 or self.lib.espeak_Synchronize() != 0:
            raise EspeakError(f"libespeak-ng failed on {text[:60]!r} (error {err})")
        pcm = np.concatenate(self._pcm) if self._pcm else np.zeros(0, np.int16)
        return pcm.astype(np.float32) / 32768.0, self._marks

    def phonemes(self, word: str, voice: Voice) -> int:
        """How many sounding phonemes `word` has when said alone in `voice`'s language."""
        key = (word, voice.name.split("+")[0])
        if key not in self._phonemes:
            _, marks = self.synth(word, Voice(key[1], voice.rate, voice.pitch))
            self._phonemes[key] = sum(m.phoneme is not None and not m.phoneme.startswith(_NOT_COUNTED) for m in marks)
        return self._phonemes[key]

    def utterance(self, text: str, voice: Voice) -> tuple[np.ndarray, list[tuple[float, float]]] | None:
        """`text` said in one go: (16 kHz clip (n,), [(start_s, end_s)] per spoken word), or None when the
        synthesizer's events do not give every word a time."""
        spoken, spans = speakable(text)
        if not spans:
            return None
        x, marks = self.synth(spoken, voice)
        words = spoken.split()
        samples = word_samples(marks, spans, len(x), lambda i: self.phonemes(words[i].rstrip(",.?!;:"), voice))
        if samples is None:
            return None
        sr = self.sample_rate
        return cut_utterance(x, sr, [(a / sr, b / sr) for a, b in samples])


def word_samples(marks: list[Mark], spans: list[tuple[int, int]], n: int,
                 phonemes: Callable[[int], int]) -> list[tuple[int, int]] | None:
    """[(start, end)] in samples per word span from the synthesis events, or None where they do not say.

    Each word event opens a group of words: from the word at its text position (or the first after it:
    positions drift by one after punctuation) to the next event's word. espeak-ng says an unstressed word with
    the next ("of the week") under one event; the group's phonemes are then shared out in order by
    `phonemes(i)`, the number word i has when said alone, and must add up (marks of `_NOT_COUNTED` aside). A
    word ends at the first event after its last counted phoneme, at the next word's start at the latest (or at
    `n`, the audio's end)."""
    groups: list[tuple[int, int, list[int]]] = []  # (first word, start sample, indices of its phonemes in marks)
    for j, m in enumerate(marks):
        if m.phoneme is None:
            i = next((k for k, (_, b) in enumerate(spans) if m.position < b), None)
            if i is not None and (not groups or i > groups[-1][0]):  # else a closing event of no word
                groups.append((i, m.sample, []))
        elif groups and not m.phoneme.startswith(_NOT_COUNTED):
            groups[-1][2].append(j)
    if not groups or groups[0][0] != 0:
        return None
    bounds = [g[0] for g in groups] + [len(spans)]
    out: list[tuple[int, int]] = []
    for (first, start, ph), last in zip(groups, bounds[1:]):
        counts = [len(ph)] if last - first == 1 else [phonemes(i) for i in range(first, last)]
        if not ph or sum(counts) != len(ph):
            return None
        k = 0
        for c in counts:
            if c < 1:
                return None
            a = start if k == 0 else marks[ph[k]].sample
            b = marks[ph[k + c - 1] + 1].sample if ph[k + c - 1] + 1 < len(marks) else n
            out.append((a, b))
            k += c
    out = [(a, min(b, out[i + 1][0]) if i + 1 < len(out) else b) for i, (a, b) in enumerate(out)]
    return out if all(a < b for a, b in out) else None
