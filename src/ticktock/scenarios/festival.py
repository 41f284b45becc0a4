"""Word audio from festival (its diphone and HTS voices), one word at a time (`wordwise`), and whole utterances
with every word's time from festival's own segments (`utterances`).

One festival process per batch of words: a Scheme script selects the voice, sets the speaking rate
(Duration_Stretch = 170 / words per minute), writes each word to its own wav and prints its segments; the
word lies between the pauses festival puts around it (its HTS voices breathe in them, so an energy
threshold would not find it). Binary and library
folder: $TICKTOCK_FESTIVAL / $TICKTOCK_FESTIVAL_LIB, else `festival` on PATH with its default library
(on the GPU machine: scripts/gpu_env.sh unpacks it to /tmp/fest).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from .binaries import engine_binary
from .espeak import cut_utterance
from .festival_english import diphones_of, scheme_lines
from .text import NOMINAL_RATE, speakable, spoken_words
from .voices import Voice, engine_voice
from .wordwise import WordByWord


SILENCES = {"pau", "#", "sil", "_", "h#"}  # the voices' pause segments
# (name, end time) pairs of a word's segments, one printed line per word
_SEGMENTS = """(define (tt_segs u)
  (mapcar (lambda (s) (format nil "%s=%f" (item.name s) (item.feat s "end"))) (utt.relation.items u 'Segment)))"""


# (token, start, end) per written token: from its first word's first segment to its last word's last one; a
# token's words may include its punctuation (the English front end's), which has no syllables
_TOKENS = """(define (tt_spoken w step)
  (while (and w (not (item.relation.daughtern w 'SylStructure))) (set! w (step w)))
  w)
(define (tt_tokens u)
  (let ((t (utt.relation.first u 'Token)) (out nil))
    (while t
      (set! out (cons (format nil "%s=%f=%f" (item.name t)
                        (item.feat (tt_spoken (item.daughter1 t) item.next)
                                   "R:SylStructure.daughter1.daughter1.segment_start")
                        (item.feat (tt_spoken (item.daughtern t) item.prev)
                                   "R:SylStructure.daughtern.daughtern.end")) out))
      (set! t (item.next t)))
    (reverse out)))"""


class FestivalError(RuntimeError):
    pass


def word_span(segments: list[tuple[str, float]]) -> tuple[float, float]:
    """(start, end) in seconds of the word among its utterance's segments: after the leading pauses, up to
    the end of the last segment that is not one."""
    sounding = [i for i, (name, _) in enumerate(segments) if name not in SILENCES]
    if not sounding:
        raise FestivalError(f"festival spoke no segment: {segments}")
    i, j = sounding[0], sounding[-1]
    return (segments[i - 1][1] if i else 0.0), segments[j][1]


def festival_command() -> list[str] | None:
    """The base command (binary [--libdir DIR --datadir DIR]), or None if festival cannot be found."""
    binary = engine_binary("TICKTOCK_FESTIVAL", "festival")
    if binary is None:
        return None
    lib = os.environ.get("TICKTOCK_FESTIVAL_LIB")  # festival unpacked elsewhere than /usr/share/festival
    return [binary] + (["--libdir", lib, "--datadir", lib] if lib else [])  # init.scm and voices are data


def festival_voices() -> set[str]:
    """The festival voices installed (empty without festival)."""
    cmd = festival_command()
    if cmd is None:
        return set()
    out = subprocess.run([*cmd, "--pipe"], input=b"(print (voice.list))", capture_output=True, timeout=60)
    return set(out.stdout.decode().strip("()\n ").split())


class FestivalRenderer(WordByWord):
    def __init__(self, cache_size: int = 4096) -> None:
        super().__init__(cache_size)
        cmd = festival_command()
        if cmd is None:
            raise FestivalError("festival not found: install it or set TICKTOCK_FESTIVAL")
        self.cmd = cmd

    def _voice_lines(self, voice: Voice) -> list[str]:
        name = engine_voice(voice.name)
        select = scheme_lines(name) if diphones_of(name) else [f"(voice_{name})"]
        return [*select, f"(Parameter.set 'Duration_Stretch {NOMINAL_RATE / voice.rate:.4f})"]

    def utterances(self, texts: list[str], voice: Voice) -> dict[str, tuple[np.ndarray, list[tuple[float, float]]]]:
        """Each text said in one go, in one festival process: (16 kHz clip from its first word's start to its
        last word's end, [(start_s, end_s)] per spoken word); a text whose tokens festival reads otherwise than
        its spoken words is left out (rendered word by word)."""
        texts = list(dict.fromkeys(texts))
        spoken = [speakable(t)[0] for t in texts]  # [a-z0-9'-] words and closing punctuation: safe in Scheme
        lines = [_TOKENS, *self._voice_lines(voice)]
        with tempfile.TemporaryDirectory(prefix="ticktock-utterances-") as d:
            for i, text in enumerate(spoken):
                lines += [f'(set! u (utt.synth (Utterance Text "{text}")))', f'(utt.save.wave u "{d}/{i}.wav" \'riff)',
                          f'(format t "TU {i} %l\\n" (tt_tokens u))']
            proc = subprocess.run([*self.cmd, "--pipe"], input="\n".join(lines).encode(), capture_output=True)
            self.calls += 1
            found = {int(m[1]): [(n, float(a), float(b)) for n, a, b in re.findall(r'"([^"=]+)=([0-9.]+)=([0-9.]+)"', m[2])]
                     for m in re.finditer(r"^TU (\d+) (.*)$", proc.stdout.decode(errors="replace"), re.M)}
            out = {}
            for i, text in enumerate(texts):
                tokens, wav = found.get(i), Path(d) / f"{i}.wav"
                if tokens is None or not wav.exists() or [n for n, _, _ in tokens] != spoken_words(text):
                    continue
                x, sr = sf.read(wav, dtype="float32")
                out[text] = cut_utterance(x if x.ndim == 1 else x.mean(1), sr, [(a, b) for _, a, b in tokens])
        return {t: got for t, got in out.items() if got is not None}

    def synth(self, words: list[str], voice: Voice, folder: Path) -> list[tuple[float, float] | None]:
        lines = [_SEGMENTS, *self._voice_lines(voice)]
        # words are spoken_words(): [a-z0-9'-] only, safe inside a Scheme string
        for i, w in enumerate(words):
            lines += [f'(set! u (utt.synth (Utterance Text "{w}")))', f'(utt.save.wave u "{folder}/{i}.wav" \'riff)',
                      f'(format t "TT {i} %l\\n" (tt_segs u))']
        proc = subprocess.run([*self.cmd, "--pipe"], input="\n".join(lines).encode(), capture_output=True)
        found = {int(m[1]): [(n, float(t)) for n, t in re.findall(r'"([^"=]+)=([0-9.]+)"', m[2])]
                 for m in re.finditer(r"^TT (\d+) (.*)$", proc.stdout.decode(errors="replace"), re.M)}
        missing = [w for i, w in enumerate(words) if i not in found or not (folder / f"{i}.wav").exists()]
        if proc.returncode != 0 or missing:
            raise FestivalError(f"festival failed on {voice.name} ({proc.returncode}), no audio for {missing[:5]}: "
                                f"{proc.stderr.decode()[:300]}")
        return [word_span(found[i]) for i in range(len(words))]
