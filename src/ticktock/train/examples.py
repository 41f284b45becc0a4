"""Training examples: a window of a scripted, rendered session as one token/audio sequence.

Layout (docs/design.md §1): prefix, then per unit `<unit> a_1..a_E [tool result] outputs`.
Labels are the model's outputs only (decision, content, terminator); everything
else is input. Units sit at a random logical-position offset after the prefix so
long sessions (and evicted caches) stay in distribution.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from ..protocol import Decision, DuplexProtocol

IGNORE = -100
TRANSCRIBE_SYSTEM = "Transcribe what you hear."
CONTEXT_SAMPLES = 240


@dataclass
class UnitSpec:
    decision: Decision
    content: str = ""
    turn_end: bool = False
    tool_result: str | None = None
    heard_from: int = -1  # first unit whose audio the content answers (-1: none); see `build_example`
    pause: bool = False  # inside a paused request: the model must keep listening (side-channel `pause` term)
    recall: bool = False  # answers a recall question (side-channel `recall` term, memory examples)
    hesitated: bool = False  # a listen where the script replies (`hesitation`): context, not a label


@dataclass
class Example:
    ids: np.ndarray  # (T,) int64; audio slots hold the pad id
    labels: np.ndarray  # (T,) int64, IGNORE except model outputs
    positions: np.ndarray  # (T,) int64 logical positions
    audio_slot: np.ndarray  # (T,) int64: k*E + j for the j-th embedding of window unit k, else -1
    audio: np.ndarray  # ((U+1)*chunk + 240,) float16: context chunk + U chunks, + log-mel left context
    n_units: int
    frame_words: np.ndarray | None = None  # (U * inner_per_chunk,) int64 word classes per encoder frame
    mel_floor: np.ndarray | None = None  # (U+1,) a tower's log-mel floor per unit, context first (`tower_audio`)
    first_unit: int = 0  # the window's first unit's index in its session


def filler_id(protocol: DuplexProtocol) -> int:
    """An id for slots whose token is never read (audio slots, batch padding): the pad token, else the unit
    marker (a published model's protocol may map no pad)."""
    return protocol.id("pad") if protocol.has("pad") else protocol.id("unit")


def transcription_units(words: list[dict], n_units: int, chunk_s: float = 1.0) -> list[UnitSpec]:
    """Listening pre-training targets: each unit speaks the user words that ended inside its chunk."""
    per_unit: list[list[str]] = [[] for _ in range(n_units)]
    for w in words:
        if w.get("speaker", "user") != "user":
            continue
        k = min(n_units - 1, int(w["end"] // chunk_s))
        per_unit[k].append(w["word"])
    return [UnitSpec(Decision.SPEAK, " ".join(ws)) if ws else UnitSpec(Decision.LISTEN) for ws in per_unit]


def heard_from_units(units: list, utterances: list, chunk_s: float = 1.0) -> list[int]:
    """Per unit, the first unit whose audio its content depends on (-1 for listening units).

    A reply (a run of speak/tool units) answers the user's speech since the previous reply
    began — every part of a paused request, a barge-in — and a reply with no new speech before
    it (after a tool result) continues the previous one's. A recall answer depends on
    everything since the session began. `units` are `UnitTarget`s, `utterances` `Utterance`s.
    """
    starts = sorted(int(u.start_s // chunk_s) for u in utterances
                    if u.speaker == "user" and u.role in ("request", "part", "barge_in"))
    out, prev_run, heard, in_run = [], -1, 0, False
    for u in units:
        if u.decision == "listen":
            out.append(-1)
            in_run = False
            continue
        if not in_run:
            new = [s for s in starts if prev_run < s <= u.index]
            heard = new[0] if new else heard
            prev_run, in_run = u.index, True
        out.append(0 if "recall" in u.tags else heard)
    return out


def choose_window(sizes: list[int], prefix_len: int, rng: random.Random, max_len: int,
                  turn_starts: list[int] | None = None) -> tuple[int, int]:
    """Units [u0, u1) of a random window that fits `max_len` tokens after the prefix.

    Starts at 0 three times in ten, at one of `turn_starts` (units where a user turn begins) three
    in ten when given, anywhere otherwise.
    """
    u0 = rng.randrange(len(sizes))
    r = rng.random()
    if r < 0.3:
        u0 = 0
    elif r < 0.6 and turn_starts:
        u0 = rng.choice(turn_starts)
    u1, total = u0, prefix_len
    while u1 < len(sizes) and total + sizes[u1] <= max_len:
        total += sizes[u1]
        u1 += 1
    if u1 == u0:
        raise ValueError(f"a single unit does not fit max_len={max_len}")
    return u0, u1


def window_positions(prefix_len: int, n: int, offset: int) -> list[int]:
    """Logical positions of `n` tokens: the prefix from 0, the units `offset` further on."""
    return list(range(prefix_len)) + list(range(prefix_len + offset, offset + n))


def window_audio(audio: np.ndarray, u0: int, u1: int, chunk: int) -> np.ndarray:
    """Units [u0, u1) of audio with one chunk of encoder context and the log-mel left context, float16."""
    start = (u0 - 1) * chunk - CONTEXT_SAMPLES
    need = (u1 - u0 + 1) * chunk + CONTEXT_SAMPLES
    seg = np.zeros(need, dtype=np.float32)
    lo = max(0, start)
    src = audio[lo : start + need]
    seg[lo - start : lo - start + len(src)] = src
    return seg.astype(np.float16)


def unit_layout(protocol: DuplexProtocol, k: int, text: list[int], out: list[int],
                targets: list[int] | None = None) -> tuple[list[int], list[int], list[int]]:
    """Window unit k as a session lays it out: (ids, labels, audio slots), each (opening + E + close + text + out,).

    `text`: input tokens after the audio (a tool result, a transcript); `out`: the unit's outputs, learnt as
    `targets` (default `out`). The label at position i is the token at i + 1: outputs are predicted from the token
    before them.
    """
    e = protocol.audio_per_chunk
    inp, close = protocol.unit_open_ids(k), protocol.audio_close_ids()
    ids = inp + [filler_id(protocol)] * e + close + text + out
    slots = [-1] * len(inp) + [k * e + j for j in range(e)] + [-1] * (len(close) + len(text) + len(out))
    labels = [IGNORE] * (len(inp) + e + len(close) + len(text) - 1) + (out if targets is None else targets) + [IGNORE]
    return ids, labels, slots


def build_example(protocol: DuplexProtocol, system: str, units: list[UnitSpec], audio: np.ndarray,
                  rng: random.Random, max_len: int = 512, max_offset: int = 3000,
                  words: list[dict] | None = None, inner_per_chunk: int = 0,
                  floors: np.ndarray | None = None) -> Example:
    """A random window of the session that fits `max_len` tokens. `audio` is the whole session at 16 kHz.

    With `words` (the renderer's word times) and `inner_per_chunk`, also the window's frame-level
    word classes for the encoder objective (`word_frames`). With `floors` (per session unit, `tower_audio`),
    the window's log-mel floors. Units open and close as a session lays them out (`unit_open_ids`, counted
    from the window's start, and `audio_close_ids`).

    A unit whose content answers speech from before the window (`UnitSpec.heard_from` < u0) keeps
    its decision label but not its content's: the model cannot hear those words, and learning to
    produce them anyway teaches it to guess (a timer of 20 minutes when the user said 7). A hesitated unit
    (`UnitSpec.hesitated`) is laid out but learns nothing.
    """
    p, e = protocol, protocol.audio_per_chunk
    chunk = p.chunk_samples
    prefix = p.prefix_ids(system)
    close = p.audio_close_ids()
    bodies = []
    for u in units:
        tr = p.tool_result_ids(u.tool_result) if u.tool_result else []
        out = p.output_ids(u.decision, u.content, u.turn_end)
        bodies.append((tr, out))
    opening = len(p.unit_open_ids(1))  # the longest opening (a unit after another)
    sizes = [opening + e + len(close) + len(tr) + len(out) for tr, out in bodies]
    turn_starts = sorted({u.heard_from for u in units if u.heard_from > 0})
    u0, u1 = choose_window(sizes, len(prefix), rng, max_len, turn_starts)
    ids, labels, slots = list(prefix), [IGNORE] * len(prefix), [-1] * len(prefix)
    for k, (tr, out) in enumerate(bodies[u0:u1]):
        targets = out
        if units[u0 + k].hesitated:
            targets = [IGNORE] * len(out)
        elif 0 <= units[u0 + k].heard_from < u0:  # unheard
            targets = out[:1] + [IGNORE] * (len(out) - 1)
        unit_ids, unit_labels, unit_slots = unit_layout(p, k, tr, out, targets)
        ids, labels, slots = ids + unit_ids, labels + unit_labels, slots + unit_slots
    offset = 0 if u0 == 0 and rng.random() < 0.5 else rng.randrange(max_offset)
    positions = window_positions(len(prefix), len(ids), offset)
    frames = None
    if words is not None and inner_per_chunk:
        from .word_frames import frame_labels, word_vocab

        frames = frame_labels(words, u0, u1 - u0, inner_per_chunk, word_vocab(), p.chunk_seconds)
    floor = None if floors is None else floors[np.arange(u0 - 1, u1).clip(0)]  # the context unit first
    return Example(np.array(ids), np.array(labels), np.array(positions), np.array(slots),
                   window_audio(audio, u0, u1, chunk), u1 - u0, frames, floor, u0)
