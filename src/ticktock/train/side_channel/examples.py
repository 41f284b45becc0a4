"""Side-channel training examples: one session window laid out twice (docs/design.md §4).

* the **student** sequence holds a transcription segment `<|asr_start|> words <|asr_end|>`
  in the units whose words end there (`word_units`), at the chosen placement;
* the **teacher** sequence is the native one (no segments), what the frozen base sees.

Per student position: `asr_labels` (the next transcript token or `<|asr_end|>`),
`open_target` (at a designated point: 1 if a segment opens there, 0 if not) and
`labels` (the next native output token). Native predictions are paired with the
teacher's by order, not by index (segments shift the student's positions).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from ...protocol import Decision, DuplexProtocol
from ...scenarios.script import Script
from ..examples import IGNORE, UnitSpec, choose_window, window_audio, window_positions

PLACEMENT_CHOICES = ("after_decision", "after_content", "both")

NATIVE, SEGMENT, INPUT = 0, 1, 2  # the role of a token in the student sequence


@dataclass
class SideChannelExample:
    ids: np.ndarray  # (T,) student tokens; audio slots hold the pad id
    labels: np.ndarray  # (T,) next native output token, else IGNORE
    asr_labels: np.ndarray  # (T,) next transcript token / <|asr_end|>, else IGNORE
    open_target: np.ndarray  # (T,) 1/0 at designated points, else -1
    positions: np.ndarray  # (T,)
    audio_slot: np.ndarray  # (T,) k*E + j for the j-th embedding of window unit k, else -1
    teacher_ids: np.ndarray  # (T',) the native sequence
    teacher_labels: np.ndarray  # (T',)
    teacher_positions: np.ndarray  # (T',)
    teacher_slot: np.ndarray  # (T',)
    audio: np.ndarray  # ((U+1)*chunk + 240,) float16, shared by both sequences
    n_units: int
    memory_labels: np.ndarray | None = None  # (T,) native targets learnt by cross-entropy (memory examples)
    pause: np.ndarray | None = None  # (T,) bool: where a pause unit's decision is predicted (the `pause` term)
    recall: np.ndarray | None = None  # (T,) bool: where a recall answer's output is predicted (the `recall` term)
    kv_write: np.ndarray | None = None  # (T,) when the runtime wrote each token (`kv_visibility`; exact examples)
    kv_gone: np.ndarray | None = None  # (T,) when eviction removed it (`kv_visibility.NEVER`: never)


def unit_tokens(protocol: DuplexProtocol, unit: UnitSpec, words: str, placement: str | None) -> tuple[list[int], list[int], int]:
    """One unit's output tokens with its segment: (tokens, roles, index of the designated point or -1).

    The designated point is the token after which the model decides whether to open a segment.
    """
    p = protocol
    out = p.output_ids(unit.decision, unit.content, unit.turn_end)
    roles = [NATIVE] * len(out)
    if placement is None:
        return out, roles, -1
    at = 0 if placement == "after_decision" else len(out) - 1  # after <|listen|> both placements trail the unit
    if words:
        seg = p.asr_ids(words)
        out = out[: at + 1] + seg + out[at + 1 :]
        roles = roles[: at + 1] + [SEGMENT] * len(seg) + roles[at + 1 :]
    return out, roles, at


def unit_bodies(protocol: DuplexProtocol, units: list[UnitSpec], words: list[str],
                placement: str | None) -> list[tuple[list[int], list[int], list[int], int]]:
    """Per unit: (tool-result tokens, output tokens with its segment, their roles, designated point); see `unit_tokens`."""
    assert len(words) == len(units), f"words: expected one entry per unit ({len(units)}), got {len(words)}"
    bodies = []
    for u, w in zip(units, words):
        tr = protocol.tool_result_ids(u.tool_result) if u.tool_result else []
        bodies.append((tr, *unit_tokens(protocol, u, w, placement)))
    return bodies


def build_side_channel_example(protocol: DuplexProtocol, system: str, units: list[UnitSpec], words: list[str],
                               audio: np.ndarray, rng: random.Random, placement: str, max_len: int = 512,
                               max_offset: int = 3000) -> SideChannelExample:
    """A random window of a session as student (with segments) and teacher (native) sequences.

    words: per unit, the transcript it should write ('' = no segment); audio: the session at 16 kHz.
    """
    p, e = protocol, protocol.audio_per_chunk
    chunk = p.chunk_samples
    prefix = p.prefix_ids(system)
    bodies = unit_bodies(p, units, words, placement)
    sizes = [1 + e + len(tr) + len(out) for tr, out, _, _ in bodies]
    u0, u1 = choose_window(sizes, len(prefix), rng, max_len)
    offset = 0 if u0 == 0 and rng.random() < 0.5 else rng.randrange(max_offset)

    ids, roles, slots, opens = list(prefix), [INPUT] * len(prefix), [-1] * len(prefix), [-1] * len(prefix)
    t_ids, t_roles, t_slots = list(prefix), [INPUT] * len(prefix), [-1] * len(prefix)
    pause_at = []  # student positions that predict a pause unit's decision
    for k, (tr, out, rl, at) in enumerate(bodies[u0:u1]):
        head = [p.id("unit")] + [p.id("pad")] * e + tr
        if units[u0 + k].pause:
            pause_at.append(len(ids) + len(head) - 1)
        head_slots = [-1] + [k * e + j for j in range(e)] + [-1] * len(tr)
        native = [t for t, r in zip(out, rl) if r == NATIVE]
        if at >= 0:
            opened = at + 1 < len(rl) and rl[at + 1] == SEGMENT
            opens += [-1] * len(head) + [int(opened) if i == at else -1 for i in range(len(out))]
        else:
            opens += [-1] * (len(head) + len(out))
        ids += head + out
        roles += [INPUT] * len(head) + rl
        slots += head_slots + [-1] * len(out)
        t_ids += head + native
        t_roles += [INPUT] * len(head) + [NATIVE] * len(native)
        t_slots += head_slots + [-1] * len(native)

    labels = next_labels(ids, roles, NATIVE)
    t_labels = next_labels(t_ids, t_roles, NATIVE)
    assert (labels != IGNORE).sum() == (t_labels != IGNORE).sum(), "student and teacher must share native events"
    asr_labels = next_labels(ids, roles, SEGMENT, skip=p.id("asr_start"))  # opening is `open_target`'s
    pause = np.zeros(len(ids), dtype=bool)
    pause[pause_at] = True
    return SideChannelExample(
        np.array(ids), labels, asr_labels, np.array(opens), np.array(window_positions(len(prefix), len(ids), offset)),
        np.array(slots), np.array(t_ids), t_labels, np.array(window_positions(len(prefix), len(t_ids), offset)),
        np.array(t_slots), window_audio(audio, u0, u1, chunk), u1 - u0, pause=pause)


def next_labels(seq: list[int], roles: list[int], role: int, skip: int | None = None) -> np.ndarray:
    """labels[i] = seq[i + 1] where that token has `role` (the prediction made at i)."""
    lab = np.full(len(seq), IGNORE, dtype=np.int64)
    for i in range(len(seq) - 1):
        if roles[i + 1] == role and seq[i + 1] != skip:
            lab[i] = seq[i + 1]
    return lab


def pick_placement(choice: str, rng: random.Random) -> str:
    """`both` draws one placement per example."""
    if choice not in PLACEMENT_CHOICES:
        raise ValueError(f"unknown placement {choice!r}; known: {', '.join(PLACEMENT_CHOICES)}")
    return rng.choice(["after_decision", "after_content"]) if choice == "both" else choice


def recall_ends(script: Script) -> list[int]:
    """The unit after each recall answer of a script: where a memory example can end on one."""
    tagged = [k for k, u in enumerate(script.units) if "recall" in u.tags]
    return [k + 1 for k in tagged if k + 1 not in tagged]


def script_unit_spec(unit, hold_tags: tuple[str, ...] = ("pause",)) -> UnitSpec:
    """A script unit's training target; `pause` marks it for the `pause` term when it carries one of `hold_tags`,
    `recall` for the `recall` term when it answers a recall question."""
    return UnitSpec(Decision[unit.decision.upper()], unit.content, unit.turn_end, unit.tool_result,
                    pause=any(t in unit.tags for t in hold_tags), recall="recall" in unit.tags)
