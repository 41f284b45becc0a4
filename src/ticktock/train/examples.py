"""Training examples: a window of a scripted, rendered session as one token/audio sequence.

Layout (DESIGN §1): prefix, then per unit `<unit> a_1..a_E [tool result] outputs`.
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


@dataclass
class Example:
    ids: np.ndarray  # (T,) int64; audio slots hold the pad id
    labels: np.ndarray  # (T,) int64, IGNORE except model outputs
    positions: np.ndarray  # (T,) int64 logical positions
    audio_slot: np.ndarray  # (T,) int64: k*E + j for the j-th embedding of window unit k, else -1
    audio: np.ndarray  # ((U+1)*chunk + 240,) float16: context chunk + U chunks, + log-mel left context
    n_units: int


def transcription_units(words: list[dict], n_units: int, chunk_s: float = 1.0) -> list[UnitSpec]:
    """Listening pre-training targets: each unit speaks the user words that ended inside its chunk."""
    per_unit: list[list[str]] = [[] for _ in range(n_units)]
    for w in words:
        if w.get("speaker", "user") != "user":
            continue
        k = min(n_units - 1, int(w["end"] // chunk_s))
        per_unit[k].append(w["word"])
    return [UnitSpec(Decision.SPEAK, " ".join(ws)) if ws else UnitSpec(Decision.LISTEN) for ws in per_unit]


def build_example(protocol: DuplexProtocol, system: str, units: list[UnitSpec], audio: np.ndarray,
                  rng: random.Random, max_len: int = 512, max_offset: int = 3000) -> Example:
    """A random window of the session that fits `max_len` tokens. `audio` is the whole session at 16 kHz."""
    p, e = protocol, protocol.audio_per_chunk
    chunk = int(round(p.chunk_seconds * 16000))
    prefix = p.prefix_ids(system)
    bodies = []
    for u in units:
        inp = [p.id("unit")]
        tr = p.tool_result_ids(u.tool_result) if u.tool_result else []
        out = p.output_ids(u.decision, u.content, u.turn_end)
        bodies.append((inp, tr, out))
    sizes = [1 + e + len(tr) + len(out) for _, tr, out in bodies]
    u0 = rng.randrange(len(units))
    if rng.random() < 0.3:
        u0 = 0
    u1, total = u0, len(prefix)
    while u1 < len(units) and total + sizes[u1] <= max_len:
        total += sizes[u1]
        u1 += 1
    if u1 == u0:
        raise ValueError(f"a single unit does not fit max_len={max_len}")
    ids, labels, slots = list(prefix), [IGNORE] * len(prefix), [-1] * len(prefix)
    for k, (inp, tr, out) in enumerate(bodies[u0:u1]):
        ids += inp + [p.id("pad")] * e + tr + out
        slots += [-1] * len(inp) + [k * e + j for j in range(e)] + [-1] * (len(tr) + len(out))
        # the label at position i is the token at i + 1: outputs are predicted from the token before them
        labels += [IGNORE] * (len(inp) + e + len(tr) - 1) + out + [IGNORE]
    offset = 0 if u0 == 0 and rng.random() < 0.5 else rng.randrange(max_offset)
    positions = list(range(len(prefix))) + list(range(len(prefix) + offset, len(prefix) + offset + len(ids) - len(prefix)))
    start = (u0 - 1) * chunk - CONTEXT_SAMPLES
    need = (u1 - u0 + 1) * chunk + CONTEXT_SAMPLES
    seg = np.zeros(need, dtype=np.float32)
    lo = max(0, start)
    src = audio[lo : start + need]
    seg[lo - start : lo - start + len(src)] = src
    return Example(np.array(ids), np.array(labels), np.array(positions), np.array(slots), seg.astype(np.float16), u1 - u0)
