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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..protocol import Decision, DuplexProtocol
from ..scenarios.script import Script
from ..scenarios.word_units import EMISSION_DELAY_S, word_units
from .examples import IGNORE, UnitSpec, choose_window, window_audio, window_positions

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
    segment: np.ndarray | None = None  # (T,) bool: a segment token (where a segment-gated adapter acts)
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
    chunk = int(round(p.chunk_seconds * 16000))
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
        np.array(t_slots), window_audio(audio, u0, u1, chunk), u1 - u0, segment=np.array(roles) == SEGMENT,
        pause=pause)


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


@dataclass
class LongSession:
    """A worker's rendered long session, cut into `left` more examples."""

    rendered: tuple  # (system, units, per-unit words, audio)
    recall_ends: list[int]  # the unit after each recall answer
    left: int
    distill_only: bool  # its timing is jittered (`SideChannelFactory.delay_jitter`)


def script_unit_spec(unit, hold_tags: tuple[str, ...] = ("pause",)) -> UnitSpec:
    """A script unit's training target; `pause` marks it for the `pause` term when it carries one of `hold_tags`,
    `recall` for the `recall` term when it answers a recall question."""
    return UnitSpec(Decision[unit.decision.upper()], unit.content, unit.turn_end, unit.tool_result,
                    pause=any(t in unit.tags for t in hold_tags), recall="recall" in unit.tags)


@dataclass
class SideChannelFactory:
    """Fork-safe callable: seed -> one `SideChannelExample` from a freshly rendered training session.

    `memory_share` of the examples are memory examples (`memory_data`); `family_weights`
    over-samples task families as in `ticktock train base`. `long_share` of the examples are memory
    examples cut from 5-10 minute `long` sessions (training voices, their own seeds), in windows of up
    to `long_max_len` tokens: the contexts `a2t` leaves after minutes, with a recall question's facts
    thousands of positions back. Rendering one takes seconds, so each worker cuts `long_reuse`
    examples (different ends) from each long session it renders. `recall_share` of the memory examples,
    long or short, end at a recall answer where the session has one: a session asks about what it was
    told only at its end, and over an evicted cache that answer can be read from the transcripts alone.

    `delay_jitter` J: at inference the model opens its segments a little earlier or later than the
    δ = 0.5 s rule, and distillation should cover the contexts that leaves too, not the rule's alone.
    Half the rendered sessions draw their emission delay δ from [0.5 − J, 0.5 + J] s (one δ per session
    keeps the words in order) and teach through distillation only: their transcript and open-decision
    targets are dropped, so the side channel itself still learns the rule's timing.

    `fact_swap` of the memory examples rename the facts of their evicted text (`fact_swap.swap_facts`): a
    rendered session is shown many times, and its recall answers would otherwise be learnt by heart.

    `history_shuffle` of the memory examples lay their evicted exchanges out anew (`history_shuffle`): a long
    session cut many times would otherwise teach where its answers lie.

    `memory_distill` T > 0: memory examples distil their retained units (not a recall answer's) from the base on
    their last T units whole (`memory_data.build_memory_example`'s `teacher_units`).

    `exact_kv`: memory examples, long or short, are `exact_memory` examples instead — the session from its start
    laid out whole (up to `long_max_len` tokens) with the runtime's eviction schedule, every unit supervised; fact
    swap, history shuffle and local distillation do not apply to them. `exact_distill`: their non-recall units are
    distilled from the base on the same units laid out natively (`exact_memory`'s `distil`).

    `hold_tags`: the units marked for the `pause` term (`UnitSpec.pause`) are those the script tags so:
    `pause` (inside a paused request the base keeps listening), and `backchannel` if asked for (the unit
    where a user's "uh-huh" ends while the model speaks: the base keeps speaking).
    """

    protocol: DuplexProtocol
    placement: str = "after_decision"
    max_len: int = 512
    memory_share: float = 0.0
    family_weights: dict[str, float] | None = None
    long_share: float = 0.0
    long_max_len: int = 2048
    long_reuse: int = 16
    delay_jitter: float = 0.0  # half the sessions put their words in units by δ = 0.5 s ± this (seconds)
    recall_share: float = 0.0  # memory examples that end at a recall answer (`memory_data.memory_end`)
    hold_tags: tuple[str, ...] = ("pause",)  # script tags of the units the `pause` term weighs (`UnitSpec.pause`)
    fact_swap: float = 0.0  # memory examples whose evicted facts are renamed (`fact_swap.swap_facts`)
    history_shuffle: float = 0.0  # memory examples whose evicted exchanges are relaid (`history_shuffle`)
    exact_kv: bool = False  # memory examples laid out whole under the runtime's eviction mask (`exact_memory`)
    exact_distill: bool = False  # exact examples distil their non-recall units from the base
    memory_distill: int = 0  # memory examples distil their retained units from the base on this many units

    def __call__(self, seed: int) -> SideChannelExample:
        from ..scenarios.espeak import EspeakRenderer
        from .base import _WORKER, draw_training_script
        from .exact_memory import build_exact_memory_example
        from .memory_data import build_memory_example

        rng = random.Random(seed)
        renderer = _WORKER.setdefault("renderer", EspeakRenderer())
        if self.long_share > 0 and rng.random() < self.long_share:
            session = _WORKER.get("long")
            if session is None or session.left <= 0:
                session = _WORKER["long"] = LongSession(*self.render_long(renderer, seed), self.long_reuse,
                                                        self._jitter(seed) is not None)
            session.left -= 1
            placement = pick_placement(self.placement, rng)
            if self.exact_kv:
                ex = build_exact_memory_example(self.protocol, *session.rendered, rng, placement, self.long_max_len,
                                                recall_ends=session.recall_ends, recall_share=self.recall_share,
                                                distil=self.exact_distill)
            else:
                ex = build_memory_example(self.protocol, *session.rendered, rng, placement,
                                          self.long_max_len, max_gap=0,  # the gaps are real here
                                          recall_ends=session.recall_ends, recall_share=self.recall_share,
                                          swap=self._swap(rng), shuffle=self._shuffle(rng),
                                          teacher_units=self.memory_distill)
            return self._distill_only(ex) if session.distill_only else ex
        script = draw_training_script(rng, self.family_weights)  # training voices only
        (system, units, words, audio), ends = self._render(script, renderer, seed)
        memory = rng.random() < self.memory_share
        if memory and self.exact_kv:
            ex = build_exact_memory_example(self.protocol, system, units, words, audio, rng,
                                            pick_placement(self.placement, rng), self.long_max_len,
                                            recall_ends=ends, recall_share=self.recall_share,
                                            distil=self.exact_distill)
        elif memory:
            ex = build_memory_example(self.protocol, system, units, words, audio, rng,
                                      pick_placement(self.placement, rng), self.max_len,
                                      recall_ends=ends, recall_share=self.recall_share, swap=self._swap(rng),
                                      shuffle=self._shuffle(rng), teacher_units=self.memory_distill)
        else:
            ex = build_side_channel_example(self.protocol, system, units, words, audio, rng,
                                            pick_placement(self.placement, rng), self.max_len)
        return self._distill_only(ex) if self._jitter(seed) is not None else ex

    def _swap(self, rng: random.Random) -> Callable | None:
        """`swap_facts` for `fact_swap` of the memory examples, else None (draws nothing when the share is 0)."""
        from .fact_swap import swap_facts

        return swap_facts if self.fact_swap > 0 and rng.random() < self.fact_swap else None

    def _shuffle(self, rng: random.Random) -> Callable | None:
        """`shuffled_history` for `history_shuffle` of the memory examples, else None (no draw when the share is 0)."""
        from .history_shuffle import shuffled_history

        return shuffled_history if self.history_shuffle > 0 and rng.random() < self.history_shuffle else None

    @staticmethod
    def _distill_only(ex: SideChannelExample) -> SideChannelExample:
        """Drop the side channel's own targets (a jittered session's timing is not the rule's)."""
        ex.asr_labels[:] = IGNORE
        ex.open_target[:] = -1
        return ex

    def render_long(self, renderer, seed: int) -> tuple[tuple, list[int]]:
        """`_render` of a long training session."""
        from ..scenarios.suites import GENERATORS

        script = GENERATORS["long"](random.Random(f"train-long:{seed}"))  # not the `long` suite's seeds
        script.id = f"train-long-{seed}"
        return self._render(script, renderer, seed)

    def _render(self, script, renderer, seed: int) -> tuple[tuple[str, list[UnitSpec], list[str], np.ndarray],
                                                            list[int]]:
        """((system, units, per-unit transcript words, audio), the unit after each recall answer) of a script
        rendered with training voices. The ends are the rendered script's: rendering lays the units out anew."""
        from ..scenarios.suites import render_script

        r = render_script(script, "train", renderer, seed=seed)
        units = [script_unit_spec(u, self.hold_tags) for u in r.script.units]
        words = word_units(r.words, r.script.n_units, self.protocol.chunk_seconds, self.delay_for(seed))
        return (r.script.system, units, words, r.audio), recall_ends(r.script)

    def delay_for(self, seed: int) -> float:
        """The emission delay δ (seconds) of the session rendered from `seed`: the rule's for half of them."""
        jittered = self._jitter(seed)
        return EMISSION_DELAY_S if jittered is None else jittered

    def _jitter(self, seed: int) -> float | None:
        """The jittered δ of the session rendered from `seed`, or None if it keeps the rule's."""
        rng = random.Random(f"delay:{seed}")
        if self.delay_jitter <= 0 or rng.random() < 0.5:
            return None
        return max(0.0, EMISSION_DELAY_S + rng.uniform(-self.delay_jitter, self.delay_jitter))
