"""The chunk protocol: special tokens and the unit layout (docs/design.md §1).

A session is one causal sequence: a system prefix, then one *unit* per audio chunk::

    prefix:  <|system|> text <|system_end|>
    unit t:  <unit> a_1..a_n [<|tool_result|> text <|result_end|>] DECISION content TERMINATOR

This module is the only place that names a special token. Another model family
(MiniCPM-o 4.5 spells `</unit>` etc.) is another `DuplexProtocol` instance, read from a protocol file
(JSON: `DuplexProtocol.from_file`; presets in assets/protocols/, docs/models.md), not code. Such a
file may add tokens ticktock's own layout lacks — `unit_end` (closes a unit before the next `<unit>`),
`audio_end` (right after a unit's audio) — and leave out the optional ones (tool, side channel).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from enum import IntEnum
from pathlib import Path
from typing import Sequence

from .audio.io import SAMPLE_RATE

PROTOCOLS_DIR = Path(__file__).resolve().parent / "assets" / "protocols"
PROTOCOL_FILE = "ticktock_protocol.json"  # beside a checkpoint: that model's protocol, preferred to a preset
REQUIRED_TOKENS = ("system", "system_end", "unit", "listen", "speak", "chunk_eos", "turn_eos")


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
    unit_end: str | None = None  # e.g. MiniCPM-o's `</unit>`, fed before the next unit's marker
    audio_end: str | None = None  # e.g. Qwen2.5-Omni's `<|audio_eos|>`, right after a unit's audio

    def all(self) -> list[str]:
        """The token strings that are set (a tokenizer trained here reserves these)."""
        return [t for t in self.__dict__.values() if t is not None]


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
    name: str = "ticktock"
    system_template: str = "{text}"  # the system text between `system` and `system_end` (MiniCPM-o: "system\n{text}")
    turn_eos_ends_unit: bool = True  # False: a turn ends `turn_eos chunk_eos` (MiniCPM-o), only chunk_eos ends the unit
    extra_chunk_eos: tuple[str, ...] = ()  # more tokens ending a unit as chunk_eos does (MiniCPM-o: <|chunk_tts_eos|>)

    def __post_init__(self) -> None:
        ids = {}
        for name, tok in self.tokens.__dict__.items():
            if tok is None:
                if name in REQUIRED_TOKENS:
                    raise ValueError(f"protocol {self.name!r} needs a {name} token")
                continue
            ids[name] = self._resolve(tok)
        self.ids = ids
        extra = frozenset(self._resolve(t) for t in self.extra_chunk_eos)
        self.decision_ids = {ids[n]: d for n, d in (("listen", Decision.LISTEN), ("speak", Decision.SPEAK),
                                                     ("tool", Decision.TOOL)) if n in ids}
        self.terminator_ids = frozenset((ids["chunk_eos"], ids["turn_eos"])) | extra
        ends = (self.terminator_ids if self.turn_eos_ends_unit else self.terminator_ids - {ids["turn_eos"]})
        self.end_ids = ends | {ids["listen"]}  # a unit's output ends on any of these
        self.control_ids = frozenset(ids.values()) | extra  # every special token: none may appear inside a transcript

    def _resolve(self, tok: str) -> int:
        tid = self.tokenizer.token_to_id(tok)
        if tid is None:
            raise ValueError(f"tokenizer lacks the special token {tok!r} (protocol {self.name!r})")
        return tid

    @classmethod
    def from_spec(cls, tokenizer, spec: dict) -> "DuplexProtocol":
        """A protocol from its file's content: {"tokens": {name: string | null}, and any other field}.
        Token names not listed are absent (null); the required ones (`REQUIRED_TOKENS`) must be there."""
        spec = dict(spec)
        given = spec.pop("tokens")
        unknown = set(given) - {f.name for f in fields(SpecialTokens)}
        if unknown:
            raise ValueError(f"unknown protocol token names {sorted(unknown)}")
        tokens = SpecialTokens(**{f.name: given.get(f.name) for f in fields(SpecialTokens)})
        spec.pop("comment", None)
        if "extra_chunk_eos" in spec:
            spec["extra_chunk_eos"] = tuple(spec["extra_chunk_eos"])
        return cls(tokenizer, tokens, **spec)

    @property
    def chunk_samples(self) -> int:
        """Samples of one unit's audio at the model's input rate."""
        return int(round(self.chunk_seconds * SAMPLE_RATE))

    @classmethod
    def from_file(cls, tokenizer, path: str | Path) -> "DuplexProtocol":
        """A protocol file (JSON), or a shipped preset by name (assets/protocols/<name>.json)."""
        p = Path(path)
        if not p.is_file() and (PROTOCOLS_DIR / f"{path}.json").is_file():
            p = PROTOCOLS_DIR / f"{path}.json"
        if not p.is_file():
            known = ", ".join(sorted(f.stem for f in PROTOCOLS_DIR.glob("*.json")))
            raise FileNotFoundError(f"no protocol file {path} (shipped presets: {known})")
        return cls.from_spec(tokenizer, json.loads(p.read_text()))

    # ------------------------------------------------------------------ text
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True).strip()

    def id(self, name: str) -> int:
        if name not in self.ids:
            raise KeyError(f"protocol {self.name!r} maps no {name} token")
        return self.ids[name]

    def has(self, name: str) -> bool:
        return name in self.ids

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    # ------------------------------------------------------------ layout
    def prefix_ids(self, system_text: str) -> list[int]:
        text = self.system_template.replace("{text}", system_text)
        return [self.ids["system"], *self.encode(text), self.ids["system_end"]]

    def unit_open_ids(self, index: int) -> list[int]:
        """What opens unit `index`: its marker, after `unit_end` closing the previous unit (where there is one)."""
        close = [self.ids["unit_end"]] if index > 0 and "unit_end" in self.ids else []
        return [*close, self.ids["unit"]]

    def audio_close_ids(self) -> list[int]:
        """What follows a unit's audio embeddings (`audio_end`, where the model has one)."""
        return [self.ids["audio_end"]] if "audio_end" in self.ids else []

    def tool_result_ids(self, result: str) -> list[int]:
        return [self.id("tool_result"), *self.encode(result), self.id("result_end")]

    def asr_ids(self, words: str) -> list[int]:
        """A transcription side-channel segment (docs/design.md §4), the transcript cut at `max_asr_tokens`."""
        return [self.id("asr_start"), *self.encode(words)[: self.max_asr_tokens], self.id("asr_end")]

    def output_ids(self, decision: Decision, content: str = "", turn_end: bool = False) -> list[int]:
        """The model's target output for one unit (what training teaches, what parse reads)."""
        if decision == Decision.LISTEN:
            return [self.ids["listen"]]
        head = self.ids["speak"] if decision == Decision.SPEAK else self.id("tool")
        term = [self.ids["chunk_eos"]]
        if turn_end:
            term = [self.ids["turn_eos"]] if self.turn_eos_ends_unit else [self.ids["turn_eos"], *term]
        return [head, *self.encode(content), *term]

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
        if "asr_start" in self.ids and self.ids["asr_start"] in body:  # inline (after the decision) or trailing
            s = body.index(self.ids["asr_start"])
            e = body.index(self.ids["asr_end"], s) if self.ids["asr_end"] in body[s:] else len(body)
            asr = self.decode(body[s + 1 : e])
            body = body[:s] + body[e + 1 :]
        terminator = None
        if body and body[-1] in self.terminator_ids:
            terminator = "turn_eos" if body[-1] == self.ids["turn_eos"] else "chunk_eos"
            body = body[:-1]
            if terminator == "chunk_eos" and body and body[-1] == self.ids["turn_eos"]:  # `turn_eos chunk_eos`
                terminator, body = "turn_eos", body[:-1]
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
        if token in (self.ids.get("asr_start"), self.ids.get("asr_end")):
            return SlotKind.ASR_MARK
        return SlotKind.TEXT
