"""Requests read as text: training windows whose requests arrive as transcripts, not speech.

A rendered session shows the model one request per window, said by one voice; a request's words in the context
cost no rendering, so a window can hold several. Each request drawn (`short_qa` and `tool_call` scripts, with the
data's phrasings) becomes a few units over silence:

    <unit> silence            -> listen
    <unit> silence <|asr_start|> the request's words <|asr_end|> -> the script's first reply unit
    <unit> silence [tool result] -> the reply's next units, as the script has them

so the decision and the reply are learnt from words read, in the transcript format the side channel writes
(docs/design.md §4). Whether what is learnt from words read carries to the same words heard is what a stage
trained with it measures (experiments/retraining-plan.md); labels are the model's outputs only, as in
`examples.build_example`.
"""

from __future__ import annotations

import random

import numpy as np

from ..protocol import Decision, DuplexProtocol
from ..scenarios.script import Script
from .examples import IGNORE, Example, UnitSpec, unit_layout, window_audio, window_positions

READ_FAMILIES = ("short_qa", "tool_call")
NOISE_RMS = 1e-3  # the silence's floor: the quiet hiss of a room, not digital zeros
PUNCTUATION = "?.,!;:"  # what a repeated word loses the first time it is written


def read_requests(script: Script, chunk_s: float = 1.0) -> list[tuple[str, list[UnitSpec]]]:
    """(the user's words, the reply's units) for each reply of a script, in order.

    A reply runs from a speak or tool unit to the unit that ends the turn (a tool call's answer included); its
    words are the user's asking utterances (roles request and part) that began since the previous reply began
    and before its own first unit ended. A reply with no such words (a follow-up) is left out.
    """
    asks = [u for u in script.utterances if u.speaker == "user" and u.role in ("request", "part")]
    out, reply, since = [], [], -1.0
    for u in script.units:
        if u.decision == "listen" and not reply:
            continue
        if not reply:
            start = (u.index + 1) * chunk_s
            words = " ".join(a.text for a in asks if since <= a.start_s < start)
            since = start
        reply.append(UnitSpec(Decision[u.decision.upper()], u.content, u.turn_end, u.tool_result))
        if u.turn_end:
            if words:
                out.append((words, reply))
            reply = []
    return out


def mishear(words: str, rate: float, rng: random.Random, pool: list[str]) -> str:
    """`words` as a listener who mishears a share `rate` of them might transcribe them: each word, with probability
    `rate`, is replaced by a word of `pool`, said twice (the first time without its punctuation, as a listener
    writes a repeated word) or left out (one of the three alike); never empty.
    A reply trained on such transcripts learns to follow the words heard, not only words read exactly."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"mishear rate must lie in [0, 1], got {rate}")
    out = []
    for w in words.split():
        if rng.random() >= rate:
            out.append(w)
            continue
        kind = rng.randrange(3)
        out += [rng.choice(pool)] if kind == 0 else [w.rstrip(PUNCTUATION) or w, w] if kind == 1 else []
    return " ".join(out) or rng.choice(pool)


def build_read_example(protocol: DuplexProtocol, system: str, requests: list[tuple[str, list[UnitSpec]]],
                       rng: random.Random, max_len: int = 512, max_offset: int = 3000) -> Example:
    """As many of `requests` as fit `max_len` tokens after the prefix, each a listening unit, the unit that reads
    it and its reply's units (at least the first request: ValueError when even it does not fit).
    Audio: silence with a faint noise floor, `window_audio`'s layout."""
    p = protocol
    prefix = p.prefix_ids(system)
    ids, labels, slots = list(prefix), [IGNORE] * len(prefix), [-1] * len(prefix)
    k = 0
    for words, reply in requests:
        units = [(None, UnitSpec(Decision.LISTEN))] + [(words, reply[0])] + [(None, u) for u in reply[1:]]
        seq, lab, slot = [], [], []
        for j, (read, u) in enumerate(units):
            text = (p.asr_ids(read) if read else []) + (p.tool_result_ids(u.tool_result) if u.tool_result else [])
            unit_ids, unit_labels, unit_slots = unit_layout(p, k + j, text,
                                                            p.output_ids(u.decision, u.content, u.turn_end))
            seq, lab, slot = seq + unit_ids, lab + unit_labels, slot + unit_slots
        if len(ids) + len(seq) > max_len:
            if k == 0:
                raise ValueError(f"a read request of {len(seq)} tokens does not fit max_len={max_len}")
            break
        ids, labels, slots, k = ids + seq, labels + lab, slots + slot, k + len(units)
    offset = rng.randrange(max_offset)
    chunk = p.chunk_samples
    silence = np.random.default_rng(rng.randrange(1 << 32)).normal(0.0, NOISE_RMS, (k + 1) * chunk)
    audio = window_audio(silence.astype(np.float32), 1, k + 1, chunk)  # unit 0 of `silence` as the context chunk
    return Example(np.array(ids), np.array(labels), np.array(window_positions(len(prefix), len(ids), offset)),
                   np.array(slots), audio, k)
