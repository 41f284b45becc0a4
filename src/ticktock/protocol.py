"""The chunk protocol: special tokens and the unit layout (docs/design.md §1).

A session is one causal sequence: a system prefix, then one *unit* per audio chunk::

    prefix:  <|system|> text <|system_end|>
    unit t:  <unit> a_1..a_n [<|tool_result|> text <|result_end|>] DECISION content TERMINATOR

This module is the only place that names a special token. Another model family
(MiniCPM-o 4.5 spells `</unit>` etc.) is another `DuplexProtocol` instance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Sequence


class Decision(IntEnum):
    LISTEN = 0
    SPEAK = 1
    TOOL = 2


class SlotKind(IntEnum):
    """What a KV slot holds (the cache ledger, docs/design.md §3)."""

    PREFIX = 0
    UNIT_MARKER = 1
    AUDIO = 2
    DECISION = 3
    TEXT = 4
    TOOL = 5
    ASR = 6
    TERMINATOR = 7
    TOOL_RESULT = 8
    ASR_MARK = 9  # the <|asr_start|>/<|asr_end|> delimiters: structural, evictable


@dataclass(frozen=True)
class SpecialTokens:
    system: str = "<|system|>"
    system_end: str = "<|system_end|>"
    unit: str = "<unit>"
    listen: str = "<|listen|>"
    speak: str = "<|speak|>"
    tool: str = "<|tool|>"
    chunk_eos: str = "<|chunk_eos|>"
    turn_eos: str = "<|turn_eos|>"
    tool_result: str = "<|tool_result|>"
    result_end: str = "<|result_end|>"
    asr_start: str = "<|asr_start|>"
    asr_end: str = "<|asr_end|>"
    pad: str = "<|pad|>"

    def all(self) -> list[str]:
        return list(self.__dict__.values())


@dataclass
class ParsedUnit:
    """A unit's committed output tokens read back into meaning."""

    decision: Decision | None
    text: str = ""
    tool_call: str | None = None
    terminator: str | None = None  # "chunk_eos" | "turn_eos" | None (listen or cut)
    asr: str | None = None


@dataclass
class DuplexProtocol:
    """Token ids and the unit layout. Built from a tokenizer that holds the specials.

    `encode`/`decode` turn plain text into ids; the special ids are resolved once.
    """

    tokenizer: object  # tokenizers.Tokenizer (encode(str).ids, decode(ids), token_to_id)
    tokens: SpecialTokens = field(default_factory=SpecialTokens)
    audio_per_chunk: int = 10
    chunk_seconds: float = 1.0
    max_speak_tokens: int = 20
    max_unit_tokens: int = 128  # decision + content + terminator (two calls at once: up to 117); longer units are cut
    max_asr_tokens: int = 64

    def __post_init__(self) -> None:
        ids = {}
        for name, tok in self.tokens.__dict__.items():
            tid = self.tokenizer.token_to_id(tok)
            if tid is None:
                raise ValueError(f"tokenizer lacks the special token {tok!r}")
            ids[name] = tid
        self.ids = ids
        self.decision_ids = {ids["listen"]: Decision.LISTEN, ids["speak"]: Decision.SPEAK, ids["tool"]: Decision.TOOL}
        self.terminator_ids = frozenset((ids["chunk_eos"], ids["turn_eos"]))
        self.end_ids = self.terminator_ids | {ids["listen"]}  # a unit's output ends on any of these
        self.control_ids = frozenset(ids.values())  # every special token: none may appear inside a transcript

    # ------------------------------------------------------------------ text
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True).strip()

    def id(self, name: str) -> int:
        return self.ids[name]

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    # ------------------------------------------------------------ layout
    def prefix_ids(self, system_text: str) -> list[int]:
        return [self.ids["system"], *self.encode(system_text), self.ids["system_end"]]

    def tool_result_ids(self, result: str) -> list[int]:
        return [self.ids["tool_result"], *self.encode(result), self.ids["result_end"]]

    def asr_ids(self, words: str) -> list[int]:
        """A transcription side-channel segment (docs/design.md §4), the transcript cut at `max_asr_tokens`."""
        return [self.ids["asr_start"], *self.encode(words)[: self.max_asr_tokens], self.ids["asr_end"]]

    def output_ids(self, decision: Decision, content: str = "", turn_end: bool = False) -> list[int]:
        """The model's target output for one unit (what training teaches, what parse reads)."""
        if decision == Decision.LISTEN:
            return [self.ids["listen"]]
        head = self.ids["speak"] if decision == Decision.SPEAK else self.ids["tool"]
        term = self.ids["turn_eos"] if turn_end else self.ids["chunk_eos"]
        return [head, *self.encode(content), term]

    def is_unit_end(self, token: int, n_output: int) -> bool:
        """Does committing `token` as the `n_output`-th output token (1-based) end the unit?"""
        return token in self.end_ids or n_output >= self.max_unit_tokens

    def parse(self, ids: Sequence[int]) -> ParsedUnit:
        """Read a unit's committed output tokens (decision first) back into meaning."""
        if not ids:
            return ParsedUnit(decision=None)
        decision = self.decision_ids.get(ids[0])
        body = list(ids[1:])
        asr = None
        if self.ids["asr_start"] in body:  # inline (after the decision) or trailing (after the terminator)
            s = body.index(self.ids["asr_start"])
            e = body.index(self.ids["asr_end"], s) if self.ids["asr_end"] in body[s:] else len(body)
            asr = self.decode(body[s + 1 : e])
            body = body[:s] + body[e + 1 :]
        terminator = None
        if body and body[-1] in self.terminator_ids:
            terminator = "turn_eos" if body[-1] == self.ids["turn_eos"] else "chunk_eos"
            body = body[:-1]
        text = self.decode(body)
        if decision == Decision.TOOL:
            return ParsedUnit(decision, text="", tool_call=text, terminator=terminator, asr=asr)
        return ParsedUnit(decision, text=text, terminator=terminator, asr=asr)

    def output_kind(self, token: int) -> SlotKind:
        """The ledger kind of a model output token."""
        if token in self.decision_ids:
            return SlotKind.DECISION
        if token in self.terminator_ids:
            return SlotKind.TERMINATOR
        if token in (self.ids["asr_start"], self.ids["asr_end"]):
            return SlotKind.ASR_MARK
        return SlotKind.TEXT
