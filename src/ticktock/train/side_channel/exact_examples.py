"""Memory examples as the runtime's cache holds them: the session whole, under the eviction mask (docs/design.md §4).

`memory_examples` lays an evicted session out compacted and runs it as one causal sequence, so the old transcripts
are recomputed without the audio they were written beside. The runtime never does that: their keys and values
stay as they were computed, with the audio present (`kv_visibility`). A model trained on compacted layouts reads
facts back in the probe (reference transcripts, compacted: 32 of 41 `long` questions for run L2) and not in the
loop (6 of 41), and the probe run under the runtime's mask reproduces the loop's answers (docs/memory.md, the recall probes).

Here the example is the session from its first unit to `u1`, every unit whole, with per-token write and eviction
times (`kv_write`, `kv_gone`) that the trainer turns into the attention mask: each token sees what `a2t`
(budget exceeded every unit, `retention_units` R) had left when the runtime wrote it. Every unit is then in its
runtime context, so every unit is supervised: native outputs by cross-entropy (`memory_labels`, `recall` at a
recall answer), transcript tokens and open decisions as in plain side-channel examples. Facts are not renamed
and history is not relaid (the audio is there and says what it says).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from ...cache.policies.acoustic_to_text import ACOUSTIC_KINDS
from ...protocol import Decision, DuplexProtocol
from ..examples import IGNORE, UnitSpec, window_audio, window_positions
from .examples import INPUT, NATIVE, SEGMENT, SideChannelExample, next_labels, unit_bodies
from .kv_visibility import eviction_times, unit_schedule
from .memory_examples import RETENTION_UNITS, memory_end


def build_exact_memory_example(protocol: DuplexProtocol, system: str, units: list[UnitSpec], words: list[str],
                               audio: np.ndarray, rng: random.Random, placement: str, max_len: int = 8192,
                               retention_units: int = RETENTION_UNITS, recall_ends: Sequence[int] = (),
                               recall_share: float = 0.0, end: int | None = None,
                               max_offset: int = 3000) -> SideChannelExample:
    """Units [0, u1) of a session whole, with the runtime's eviction schedule (see the module docstring).

    words: per unit, the transcript segment it writes ('' = none); audio: the session at 16 kHz; u1 is drawn as
    `memory_examples.memory_end` draws it (the whole window within `max_len`), or `end`.
    """
    p, e = protocol, protocol.audio_per_chunk
    chunk = p.chunk_samples
    prefix = p.prefix_ids(system)
    bodies = unit_bodies(p, units, words, placement)
    full = [1 + e + len(tr) + len(out) for tr, out, _, _ in bodies]
    reply_ends = [k + 1 for k, u in enumerate(units)
                  if u.content and (k + 1 == len(units) or not units[k + 1].content)]
    u1 = end if end is not None else memory_end(full, full, len(prefix), 0, max_len, reply_ends, rng,
                                                recall_ends, recall_share)
    offset = 0 if rng.random() < 0.5 else rng.randrange(max_offset)

    ids, roles, slots, opens = list(prefix), [INPUT] * len(prefix), [-1] * len(prefix), [-1] * len(prefix)
    write, ledger, acoustic = [-2] * len(prefix), [-1] * len(prefix), [False] * len(prefix)
    answer = [False] * len(prefix)
    for k in range(u1):
        tr, out, rl, at = bodies[k]
        head = [p.id("unit")] + [p.id("pad")] * e + tr
        last_native = max(i for i, r in enumerate(rl) if r == NATIVE)
        trails = placement == "after_content" or units[k].decision == Decision.LISTEN
        w, led = unit_schedule(k, len(head), last_native + 1, len(out) - last_native - 1, trails)
        opened = at >= 0 and at + 1 < len(rl) and rl[at + 1] == SEGMENT
        ids += head + out
        roles += [INPUT] * len(head) + rl
        slots += [-1] + [k * e + j for j in range(e)] + [-1] * (len(tr) + len(out))
        opens += [-1] * len(head) + [int(opened) if i == at else -1 for i in range(len(out))]
        write += w
        ledger += led
        acoustic += [True] * (1 + e) + [False] * len(tr) + [p.output_kind(t) in ACOUSTIC_KINDS for t in out]
        answer += [False] * len(head) + [units[k].recall and r == NATIVE for r in rl]

    n = len(ids)
    memory_labels = next_labels(ids, roles, NATIVE)
    recall = (memory_labels != IGNORE) & np.array(answer[1:] + [False])
    positions = np.array(window_positions(len(prefix), n, offset))
    teacher = (np.array(prefix), np.full(len(prefix), IGNORE, dtype=np.int64), np.arange(len(prefix)),
               np.full(len(prefix), -1))  # no teacher: every unit is learnt by cross-entropy
    return SideChannelExample(
        np.array(ids), np.full(n, IGNORE, dtype=np.int64), next_labels(ids, roles, SEGMENT, skip=p.id("asr_start")),
        np.array(opens), positions, np.array(slots), *teacher, window_audio(audio, 0, u1, chunk), u1,
        memory_labels=memory_labels, recall=recall,
        kv_write=np.array(write, dtype=np.int64),
        kv_gone=eviction_times(np.array(ledger), np.array(acoustic), retention_units))


__all__ = ["build_exact_memory_example"]
