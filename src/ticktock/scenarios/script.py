"""A scripted session: what the user says when, and what the model must output at every unit.

One chunk = `CHUNK_S` = 1.0 s of input audio = one *unit*. At unit k the model has heard the
audio of chunk k, i.e. the interval [k, k+1) s, and outputs a decision (listen / speak / tool),
content and a terminator (`chunk_eos` if its turn continues next unit, `turn_eos` at the end).

Timing rules (implemented in `timeline.layout`, checked by `check_script`):

1. Leading silence: the first utterance starts after `plan.lead_s` (1-2 s); the session ends
   `plan.tail_units` (1-2) units after the last sound or the end of the model's last speech.
2. User (and background) words are placed one after another; each word's start/end is exact
   (rendered word by word). Between words sits the utterance's word gap plus a pause after
   punctuation (`,` -> +0.25 s, `.?!` -> +0.45 s).
3. Response onset: the model's first output unit after a user turn is the first unit k whose
   chunk end (k+1)*CHUNK_S >= last_word_end + RESPONSE_DELAY_S (0.6 s) - and after the model's
   previous output. That unit is tagged `turn_end`.
4. A reply is split into pieces of about one second of speech (2-3 words, at most
   MAX_SPEAK_WORDS words, well under the protocol's 20 tokens); piece i is spoken at unit k+i,
   turn_end False (`chunk_eos`) for all but the last piece (`turn_eos`). Unit k's speech
   *plays* during [(k+1), (k+2)) s, so the model's turn has finished playing at (k_last+2) s;
   the next user turn starts after that.
5. Tool call: one `tool` unit at the onset unit holding the whole call, or every call of a request
   that needs several as one JSON list (`chunk_eos`); the tool results are injected into the next
   unit (`tool_result`), which starts the spoken confirmation.
6. While the model speaks the user is silent except for
   - backchannels ("uh-huh"): start during the playback of a piece; the unit whose chunk holds
     the backchannel's end is tagged `backchannel`; the model keeps speaking;
   - barge-ins: the interruption starts inside chunk j (j >= 1 pieces after the onset); unit j
     is tagged `barge_in` and is `listen`, as are all units until the new request is answered
     by rule 3. The cut reply's spoken units all end with `chunk_eos`.
7. Pauses: after a user utterance that is only part of a turn (role `part`), every unit whose
   chunk end lies >= RESPONSE_DELAY_S after the part's last word and whose chunk starts before
   the turn resumes is tagged `pause` and is `listen`.
8. Units that overlap background speech or noise are tagged `background`.
9. Every other unit is `listen` with content ''.

Tags: `turn_end`, `pause`, `backchannel`, `barge_in`, `background`, `tool` (the call unit),
`tool_result` (the unit receiving a result), `answer` (speak units of the scored reply),
`recall` (speak units answering a recall question).
"""

from __future__ import annotations

import ast
import json
from dataclasses import asdict, dataclass, field
from typing import Any

CHUNK_S = 1.0
RESPONSE_DELAY_S = 0.6
MAX_SPEAK_WORDS = 6  # a speak unit's content; the protocol caps it at 20 tokens
DECISIONS = ("listen", "speak", "tool")
SPEAKERS = ("user", "background")
TAGS = ("turn_end", "pause", "backchannel", "barge_in", "background", "tool", "tool_result",
        "answer", "recall")


@dataclass
class Utterance:
    """One stretch of speech on the input audio. Times in seconds on the session timeline."""

    speaker: str  # 'user' | 'background'
    text: str
    start_s: float
    end_s: float
    role: str = "request"  # request | part | backchannel | barge_in | chatter
    voice: str = "main"  # 'main' (the session's user voice) or 'other' (a second talker)
    gain_db: float = 0.0  # relative to the user's level

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Utterance":
        return cls(**d)


@dataclass
class UnitTarget:
    """The expected model output at unit `index`, and the tool result injected as its input."""

    index: int
    decision: str = "listen"  # listen | speak | tool
    content: str = ""
    turn_end: bool = False
    tool_result: str | None = None
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "UnitTarget":
        return cls(**{**d, "tags": list(d.get("tags", []))})


@dataclass
class Script:
    """A whole session: system prompt, input speech, per-unit targets and what to score.

    `plan` is the abstract event list the timing was laid out from (see `plan.py`); the
    renderer lays it out again with the real word durations of the chosen voice.
    """

    id: str
    family: str
    system: str
    utterances: list[Utterance]
    units: list[UnitTarget]
    answer: str | None = None  # the full reply text of the scored (last) request
    tool_call: str | None = None  # the expected call, for tool families
    recall: list[dict[str, str]] = field(default_factory=list)  # [{question, answer}]
    n_units: int = 0
    plan: dict[str, Any] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return self.n_units * CHUNK_S

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "family": self.family, "system": self.system,
            "utterances": [u.to_dict() for u in self.utterances],
            "units": [u.to_dict() for u in self.units],
            "answer": self.answer, "tool_call": self.tool_call,
            "recall": [dict(r) for r in self.recall], "n_units": self.n_units, "plan": self.plan,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Script":
        return cls(
            id=d["id"], family=d["family"], system=d["system"],
            utterances=[Utterance.from_dict(u) for u in d["utterances"]],
            units=[UnitTarget.from_dict(u) for u in d["units"]],
            answer=d.get("answer"), tool_call=d.get("tool_call"),
            recall=[dict(r) for r in d.get("recall", [])], n_units=d["n_units"],
            plan=d.get("plan", {}),
        )


def parse_call(call: str) -> tuple[str, dict[str, Any]]:
    """A tool call -> (name, arguments); raises ValueError on anything else.

    The model writes JSON, as function-calling LLMs do:
    `{"name": "find_flights", "arguments": {"origin": "TYO", "dest": "OSA", "day": "Fri"}}`.
    The older keyword form `find_flights(origin="TYO", dest="OSA", day="Fri")` (models before
    stage L) is read too. Argument values must be literals (str, int, float, bool).
    """
    text = call.strip()
    name, kwargs = _parse_json_call(text) if text.startswith("{") else _parse_keyword_call(text)
    return _checked(name, kwargs, call)


def parse_calls(content: str) -> list[tuple[str, dict[str, Any]]]:
    """A tool unit's content -> its calls, in order: one call (`parse_call`), or several made at once
    as a JSON list of calls, the way parallel function calling writes them:
    `[{"name": "set_timer", "arguments": {"minutes": 10}}, {"name": "get_weather", ...}]`."""
    text = content.strip()
    if not text.startswith("["):
        return [parse_call(text)]
    try:
        items = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not a list of tool calls: {content!r}") from e
    if not (isinstance(items, list) and items):
        raise ValueError(f"a list of tool calls holds one or more call objects, got {content!r}")
    return [_checked(*_call_object(item, content), content) for item in items]


def _checked(name: str, kwargs: dict[str, Any], source: str) -> tuple[str, dict[str, Any]]:
    """(name, arguments) if the name is an identifier and every value a plain literal (argument names are
    strings in both call forms); ValueError naming `source` otherwise."""
    if not name.isidentifier():
        raise ValueError(f"bad tool name {name!r} in {source!r}")
    for k, v in kwargs.items():
        if not isinstance(v, (str, int, float, bool)):
            raise ValueError(f"non-literal argument {k!r} in {source!r}")
    return name, kwargs


def _parse_json_call(text: str) -> tuple[str, dict[str, Any]]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not a tool call: {text!r}") from e
    return _call_object(obj, text)


def _call_object(obj: Any, source: str) -> tuple[str, dict[str, Any]]:
    """A decoded JSON call `{"name": ..., "arguments": {...}}` -> (name, arguments)."""
    if not (isinstance(obj, dict) and set(obj) == {"name", "arguments"} and isinstance(obj["name"], str)
            and isinstance(obj["arguments"], dict)):
        raise ValueError(f'a JSON tool call is {{"name": ..., "arguments": {{...}}}}, got {source!r}')
    return obj["name"], obj["arguments"]


def _parse_keyword_call(text: str) -> tuple[str, dict[str, Any]]:
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"not a tool call: {text!r}") from e
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        raise ValueError(f"not a keyword-only tool call: {text!r}")
    try:
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except ValueError as e:
        raise ValueError(f"non-literal argument in {text!r}") from e
    if None in kwargs:
        raise ValueError(f"**kwargs not allowed in {text!r}")
    return node.func.id, kwargs


def same_call(a: str, b: str) -> bool:
    """Do two tool units make the same calls (same names and arguments, in order, whatever the format)?"""
    try:
        return parse_calls(a) == parse_calls(b)
    except ValueError:
        return False


def check_script(s: Script, words: list[dict] | None = None) -> None:
    """Raise AssertionError if `s` breaks the layout rules above.

    `words` (rendered word records {word, start, end, speaker, role}) enables the timing check
    that the user is silent while the model decides to speak (rule 3/6).
    """
    assert s.n_units == len(s.units) > 0, "n_units must equal len(units)"
    assert [u.index for u in s.units] == list(range(s.n_units)), "unit indices not contiguous"
    for u in s.units:
        assert u.decision in DECISIONS, f"bad decision {u.decision!r} at unit {u.index}"
        assert set(u.tags) <= set(TAGS), f"unknown tags {u.tags} at unit {u.index}"
        if u.decision == "listen":
            assert u.content == "" and not u.turn_end, f"listen unit {u.index} has content"
        elif u.decision == "speak":
            assert 0 < len(u.content.split()) <= MAX_SPEAK_WORDS, f"speak unit {u.index}: {u.content!r}"
        else:
            parse_calls(u.content)
            assert not u.turn_end, f"tool unit {u.index} must end with chunk_eos"
        if u.tool_result is not None:
            assert u.index > 0 and s.units[u.index - 1].decision == "tool", "result without a call"
    for a, b in zip(s.units, s.units[1:]):
        if a.decision != "listen" and not a.turn_end and "barge_in" not in b.tags:
            assert b.decision != "listen", f"turn continues after unit {a.index} but unit {b.index} listens"
    for u in s.utterances:
        assert 0 <= u.start_s <= u.end_s <= s.duration_s, f"utterance outside the session: {u}"
    if words is None:
        return
    prev = -1.0
    for w in (w for w in words if w["speaker"] == "user"):
        assert prev <= w["start"] < w["end"] <= s.duration_s, f"word times not monotonic: {w}"
        prev = w["end"]
    for u in s.units:
        if u.decision == "listen":
            continue
        lo, hi = (u.index + 1) * CHUNK_S - RESPONSE_DELAY_S, (u.index + 1) * CHUNK_S
        for w in words:
            if w["speaker"] == "user" and w.get("role") != "backchannel":
                assert not (w["end"] > lo + 1e-6 and w["start"] < hi), \
                    f"model outputs at unit {u.index} while the user speaks: {w}"
