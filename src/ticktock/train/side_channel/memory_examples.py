"""Memory examples: a session's context as the `a2t` eviction policy leaves it (docs/design.md §4).

The student sees the prefix, then every unit from the session's start. Units outside the
last `retention_units` keep only what `AcousticToText` keeps — transcript words, replies,
tool calls and tool results — at their original logical positions (nothing is re-encoded
after an eviction, so nothing is renumbered here); the retained units are whole, audio
included. Only the retained units are supervised: their native outputs by cross-entropy
(`memory_labels`; `recall` marks those of a recall answer, for the trainer's `recall` term), their
transcript tokens and open decisions as usual. Everything older
is readable only as text, which is what answering a recall question over an evicted
cache takes. By default there is no teacher sequence: the base model never saw an evicted
cache, so it has nothing to distil over one.

With `teacher_units` T > 0 the retained units are distilled after all ("local distillation"): the
teacher is the base on the last T units whole (the retained ones and those before them, so a
question that began earlier is heard whole), no segments, no history — what it answers an ordinary
question with needs nothing older. The retained units' native predictions are paired with its own
by order, as in `examples`; a recall answer's units are left out (without the history
the base cannot know the answer, and the `recall` term teaches it). This holds the side channel's
ordinary replies in long contexts to the base's, where cross-entropy on the script alone let a
model trained to read facts back answer ordinary questions with recall answers.

Short training sessions put a dictation a few hundred positions before its recall
question; in a long session thousands of evicted positions lie between them. Half the
examples therefore widen the evicted stretch: each evicted unit is followed by a random
gap of up to `max_gap` positions (as if more units had come and gone there).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from ...cache.policies.acoustic_to_text import ACOUSTIC_KINDS, AcousticToText
from ...protocol import DuplexProtocol
from ..examples import IGNORE, UnitSpec, window_audio, window_positions
from .examples import INPUT, NATIVE, SEGMENT, SideChannelExample, next_labels, unit_bodies

RETENTION_UNITS = AcousticToText.retention_units  # the policy's default window (5 units)


def kept_after_eviction(protocol: DuplexProtocol, tokens: list[int]) -> list[bool]:
    """Per output token of an evicted unit (decision, content, terminator, segment): does `a2t` keep it?"""
    return [protocol.output_kind(t) not in ACOUSTIC_KINDS for t in tokens]


def memory_end(full: list[int], compact: list[int], prefix_len: int, retention: int, max_len: int,
               reply_ends: list[int], rng: random.Random, recall_ends: Sequence[int] = (),
               recall_share: float = 0.0) -> int:
    """The window's end u1 (exclusive): the retained units [u1 - retention, u1) whole, the rest compacted,
    all within `max_len`. With probability `recall_share` the end of a recall answer (when one fits): a
    long session asks its questions only at its end, so a window drawn anywhere rarely holds one. Else
    half the time the end of a reply, so whole answers are learnt; else anywhere."""
    def size(u1: int) -> int:
        r0 = max(0, u1 - retention)
        return prefix_len + sum(compact[:r0]) + sum(full[r0:u1])

    fits = [u1 for u1 in range(1, len(full) + 1) if size(u1) <= max_len]
    if not fits:
        raise ValueError(f"no unit of the session fits max_len={max_len}")
    recalls = [u for u in recall_ends if u in fits]
    if recalls and recall_share > 0 and rng.random() < recall_share:  # share 0 draws as before
        return rng.choice(recalls)
    ends = [u for u in reply_ends if u in fits]
    return rng.choice(ends) if ends and rng.random() < 0.5 else rng.choice(fits)


def _layout(p: DuplexProtocol, units: list[UnitSpec], words: list[str], placement: str) -> tuple[list, list]:
    """`unit_bodies`, and per unit which of its tokens (marker, audio, tool result, outputs) survive eviction."""
    bodies = unit_bodies(p, units, words, placement)
    keeps = [[False] * (1 + p.audio_per_chunk) + [True] * len(tr) + kept_after_eviction(p, out)
             for tr, out, _, _ in bodies]
    return bodies, keeps


def build_memory_example(protocol: DuplexProtocol, system: str, units: list[UnitSpec], words: list[str],
                         audio: np.ndarray, rng: random.Random, placement: str, max_len: int = 512,
                         max_offset: int = 3000, retention_units: int = RETENTION_UNITS,
                         max_gap: int = 200, recall_ends: Sequence[int] = (),
                         recall_share: float = 0.0, end: int | None = None,
                         swap: Callable[..., tuple[list[UnitSpec], list[str]]] | None = None,
                         shuffle: Callable[..., list[int]] | None = None,
                         teacher_units: int = 0) -> SideChannelExample:
    """The session from its start to a random unit as `a2t` leaves the cache (see the module docstring).

    words: per unit, the transcript segment it writes ('' = none); audio: the session at 16 kHz;
    recall_ends: the unit after each recall answer (`memory_end` ends there with `recall_share`);
    end: end at this unit (exclusive) instead of drawing one (`max_len` is not checked then);
    swap: `fact_swap.swap_facts`, to rename the window's facts once it is drawn (a renamed word may take
    another token or two: the window can pass `max_len` by that much);
    shuffle: `history_shuffle.shuffled_history`, to lay the evicted units out in another order (each at the
    logical positions its new place gives it);
    teacher_units: distil the retained units from the base on the last this many units (0: no teacher; see the
    module docstring).
    """
    p, e = protocol, protocol.audio_per_chunk
    chunk = p.chunk_samples
    prefix = p.prefix_ids(system)
    bodies, keeps = _layout(p, units, words, placement)
    full = [len(k) for k in keeps]
    compact = [sum(k) for k in keeps]
    reply_ends = [k + 1 for k, u in enumerate(units)
                  if u.content and (k + 1 == len(units) or not units[k + 1].content)]
    u1 = end if end is not None else memory_end(full, compact, len(prefix), retention_units, max_len, reply_ends,
                                                rng, recall_ends, recall_share)
    r0 = max(0, u1 - retention_units)
    t0 = min(r0, max(0, u1 - teacher_units)) if teacher_units > 0 else r0  # the first unit with audio
    if swap is not None:
        units, words = swap(units, words, r0, u1, rng)
        bodies, keeps = _layout(p, units, words, placement)
        full = [len(k) for k in keeps]
    history = shuffle(units, words, r0, rng) if shuffle is not None else list(range(r0))
    offset = 0 if rng.random() < 0.5 else rng.randrange(max_offset)
    spread = max_gap > 0 and rng.random() < 0.5

    ids, roles, slots, opens, pos = list(prefix), [INPUT] * len(prefix), [-1] * len(prefix), [-1] * len(prefix), \
        list(range(len(prefix)))
    unit_of = [-1] * len(prefix)
    answer = [False] * len(prefix)  # a retained recall unit's native output
    nxt = len(prefix) + offset  # the logical position of the next token of the uncompacted session
    for k in history + list(range(r0, u1)):
        tr, out, rl, at = bodies[k]
        head = [p.id("unit")] + [p.id("pad")] * e + tr
        if k < r0:  # evicted: the tool result and the kept outputs, where the unit is laid out
            kept = [(t, i) for t, i, keep in zip(head + out, range(nxt, nxt + full[k]), keeps[k]) if keep]
            ids += [t for t, _ in kept]
            pos += [i for _, i in kept]
            answer += [False] * len(kept)
            roles += [INPUT] * len(kept)
            unit_of += [k] * len(kept)
            slots += [-1] * len(kept)
            opens += [-1] * len(kept)
        else:
            opened = at >= 0 and at + 1 < len(rl) and rl[at + 1] == SEGMENT
            ids += head + out
            roles += [INPUT] * len(head) + rl
            answer += [False] * len(head) + [units[k].recall and r == NATIVE for r in rl]
            unit_of += [k] * (len(head) + len(out))
            slots += [-1] + [(k - t0) * e + j for j in range(e)] + [-1] * (len(head) - 1 - e + len(out))
            opens += [-1] * len(head) + [int(opened) if i == at else -1 for i in range(len(out))]
            pos += range(nxt, nxt + full[k])
        nxt += full[k]
        if spread and k < r0:
            nxt += rng.randrange(max_gap)

    memory_labels = next_labels(ids, roles, NATIVE)
    recall = (memory_labels != IGNORE) & np.array(answer[1:] + [False])  # the position before each answer token
    distilled = [k for k in range(r0, u1) if not units[k].recall] if teacher_units > 0 else []
    labels = np.where(np.isin(np.array(unit_of[1:] + [-1]), distilled), memory_labels, IGNORE)
    teacher = _teacher(p, prefix, units, bodies, t0, u1, distilled, rng, max_offset)
    assert (labels != IGNORE).sum() == (teacher[1] != IGNORE).sum(), "student and teacher must share native events"
    return SideChannelExample(
        np.array(ids), labels, next_labels(ids, roles, SEGMENT, skip=p.id("asr_start")),
        np.array(opens), np.array(pos), np.array(slots), *teacher, window_audio(audio, t0, u1, chunk), u1 - t0,
        memory_labels=memory_labels, recall=recall)


def _teacher(p: DuplexProtocol, prefix: list[int], units: list[UnitSpec], bodies: list, t0: int, u1: int,
             distilled: list[int], rng: random.Random, max_offset: int) -> tuple[np.ndarray, ...]:
    """The base's sequence for local distillation: the prefix, then units [t0, u1) whole without segments;
    labelled at the native predictions of the `distilled` units only. (ids, labels, positions, audio slots);
    the prefix alone (nothing to distil) when no unit is distilled."""
    e = p.audio_per_chunk
    ids, roles, slots, unit_of = list(prefix), [INPUT] * len(prefix), [-1] * len(prefix), [-1] * len(prefix)
    for k in range(t0, u1) if distilled else ():
        tr, out, rl, _ = bodies[k]
        native = [t for t, r in zip(out, rl) if r == NATIVE]
        head = [p.id("unit")] + [p.id("pad")] * e + tr
        ids += head + native
        roles += [INPUT] * len(head) + [NATIVE] * len(native)
        slots += [-1] + [(k - t0) * e + j for j in range(e)] + [-1] * (len(tr) + len(native))
        unit_of += [k] * (len(head) + len(native))
    labels = np.where(np.isin(np.array(unit_of[1:] + [-1]), distilled), next_labels(ids, roles, NATIVE), IGNORE)
    offset = (0 if t0 == 0 and rng.random() < 0.5 else rng.randrange(max_offset)) if distilled else 0
    return np.array(ids), labels, np.array(window_positions(len(prefix), len(ids), offset)), np.array(slots)


__all__ = ["RETENTION_UNITS", "build_memory_example", "kept_after_eviction", "memory_end"]
