"""The serving wire protocol: client messages validated into dataclasses, server events built as dicts.

Every client message is one JSON object with a `type`; anything else becomes a
`ProtocolError` whose `code` the server sends back in an `error` event (the
session and the connection survive). docs/protocol.md is the reference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# error codes: one per distinct thing a client can get wrong (docs/protocol.md lists them)
BAD_JSON = "bad_json"
BAD_MESSAGE = "bad_message"
UNKNOWN_TYPE = "unknown_type"
BINARY_FRAME = "binary_frame"
BAD_AUDIO = "bad_audio"
BAD_SAMPLE_RATE = "bad_sample_rate"
FRAME_TOO_LONG = "frame_too_long"
NO_SESSION = "no_session"
SESSION_ACTIVE = "session_active"
BAD_OPTION = "bad_option"
SERVER_BUSY = "server_busy"
UNKNOWN_CALL = "unknown_call"
TOOL_RESULT_LATE = "tool_result_late"
CONTEXT_FULL = "context_full"
BACKLOG_FULL = "backlog_full"
QUEUE_FULL = "queue_full"
IDLE_TIMEOUT = "idle_timeout"
INTERNAL = "internal"

AUDIO_FORMATS = ("pcm16", "float32")
MAX_SYSTEM_CHARS = 2000
MAX_TOOL_RESULT_CHARS = 2000
MAX_SEED = 2**63 - 1  # what torch.Generator.manual_seed takes without overflowing
MAX_COUNT = 2**31 - 1  # any slot count beyond this is a mistake, not a budget
MAX_QUOTE_CHARS = 64  # client text quoted in an error: a 15 MiB string is not echoed back
MAX_ERROR_CHARS = 500  # a last guard on any error message's length


class ProtocolError(Exception):
    """A client mistake: `code` is machine-readable, the message is meant for people."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


@dataclass
class SessionStart:
    decoder: str = "sl"
    temperature: float = 0.0
    kv_policy: str = "none"
    kv_budget: int | None = None  # resident KV slots the policy keeps (None: the policy's default)
    system: str | None = None
    seed: int = 0
    auto_tools: bool = True  # the server answers tool calls with the mock tools if the client does not
    tts: bool = True  # send `audio.delta` for speak units (when the server has espeak-ng)
    side_channel: bool | None = None  # transcripts of the user's speech (None: on iff the server has the side channel)


@dataclass
class AudioAppend:
    audio: str  # base64
    format: str
    sample_rate: Any  # validated by the audio input, which owns the rate rules
    channels: int = 1


@dataclass
class ToolResult:
    result: str
    call_id: str | None = None


@dataclass
class SessionStop:
    pass


ClientMessage = SessionStart | AudioAppend | ToolResult | SessionStop


def _get(msg: dict, key: str, kind: type | tuple[type, ...], default: Any = None, required: bool = False) -> Any:
    if key not in msg or msg[key] is None:
        if required:
            raise ProtocolError(BAD_MESSAGE, f"{msg['type']} needs a {key!r} field")
        return default
    value = msg[key]
    # bool is an int in Python: never accept it where a number is meant
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ProtocolError(BAD_MESSAGE, f"{msg['type']}.{key} must be {_names(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise ProtocolError(BAD_MESSAGE, f"{msg['type']}.{key} must be {_names(kind)}, got {type(value).__name__}")
    return value


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({str: "a string", int: "an integer", float: "a number", bool: "a boolean"}.get(k, k.__name__) for k in kinds)


def _bounded(msg: dict, key: str, kind: type | tuple[type, ...], default: Any, lo: float, hi: float,
             code: str = BAD_OPTION) -> Any:
    """A numeric field within [lo, hi]. Compared before any float(): a 4000-digit integer would overflow it."""
    value = _get(msg, key, kind, default)
    if value is not None and not lo <= value <= hi:  # NaN fails every comparison
        raise ProtocolError(code, f"{msg['type']}.{key} must be in [{lo}, {hi}], got {quote(value)}")
    return value


def _session_start(msg: dict) -> SessionStart:
    temperature = float(_bounded(msg, "temperature", (int, float), 0.0, 0, 5))
    system = _get(msg, "system", str)
    if system is not None and len(system) > MAX_SYSTEM_CHARS:
        raise ProtocolError(BAD_OPTION, f"system prompt longer than {MAX_SYSTEM_CHARS} characters")
    return SessionStart(decoder=_get(msg, "decoder", str, "sl"), temperature=temperature,
                        kv_policy=_get(msg, "kv_policy", str, "none"),
                        kv_budget=_bounded(msg, "kv_budget", int, None, 1, MAX_COUNT), system=system,
                        seed=_bounded(msg, "seed", int, 0, 0, MAX_SEED), auto_tools=_get(msg, "auto_tools", bool, True),
                        tts=_get(msg, "tts", bool, True), side_channel=_get(msg, "side_channel", bool))


def _audio_append(msg: dict) -> AudioAppend:
    fmt = _get(msg, "format", str, "pcm16")
    if fmt not in AUDIO_FORMATS:
        raise ProtocolError(BAD_AUDIO, f"audio format must be one of {', '.join(AUDIO_FORMATS)}, got {quote(fmt)}")
    if "sample_rate" not in msg:
        raise ProtocolError(BAD_SAMPLE_RATE, "audio.append needs a 'sample_rate' field (Hz, e.g. 16000 or 48000)")
    channels = _bounded(msg, "channels", int, 1, 1, 8, code=BAD_AUDIO)
    return AudioAppend(audio=_get(msg, "audio", str, required=True), format=fmt,
                       sample_rate=msg["sample_rate"], channels=channels)


def _tool_result(msg: dict) -> ToolResult:
    result = _get(msg, "result", str, required=True)
    if len(result) > MAX_TOOL_RESULT_CHARS:
        raise ProtocolError(BAD_MESSAGE, f"tool result longer than {MAX_TOOL_RESULT_CHARS} characters")
    return ToolResult(result=result, call_id=_get(msg, "call_id", str))


PARSERS = {
    "session.start": _session_start,
    "audio.append": _audio_append,
    "tool.result": _tool_result,
    "session.stop": lambda msg: SessionStop(),
}


def parse_client(raw: str | bytes) -> ClientMessage:
    """One client frame -> a message dataclass; ProtocolError says what is wrong with it."""
    if isinstance(raw, (bytes, bytearray, memoryview)):
        raise ProtocolError(BINARY_FRAME, "binary frames are not part of the protocol: send JSON text "
                                          "messages (audio as base64 in audio.append)")
    try:
        msg = json.loads(raw, parse_constant=_no_constant)
    except json.JSONDecodeError as err:  # its text says where, never what
        raise ProtocolError(BAD_JSON, f"message is not valid JSON: {err}") from None
    except RecursionError:
        raise ProtocolError(BAD_JSON, "message is not valid JSON: nested too deeply") from None
    except ValueError:  # Python refuses int() of more than 4300 digits, inside json.loads
        raise ProtocolError(BAD_JSON, "message holds a number with too many digits") from None
    if not isinstance(msg, dict):
        raise ProtocolError(BAD_MESSAGE, f"a message must be a JSON object, got {type(msg).__name__}")
    kind = msg.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, "a message needs a string 'type' field")
    if kind not in PARSERS:
        raise ProtocolError(UNKNOWN_TYPE, f"unknown message type {quote(kind)}; known: {', '.join(PARSERS)}")
    return PARSERS[kind](msg)


def _no_constant(name: str) -> None:
    raise ProtocolError(BAD_JSON, f"{name} is not JSON: send finite numbers only")


def quote(value: object) -> str:
    """Client text for a message: its repr, cut to MAX_QUOTE_CHARS characters with an ellipsis."""
    if isinstance(value, str):  # cut before repr: escapes could make a long string longer still
        cut = value[:MAX_QUOTE_CHARS]
        return repr(cut) if len(value) <= MAX_QUOTE_CHARS else f"{cut!r}… ({len(value)} characters)"
    text = repr(value)  # a number: at most 4300 digits, json.loads saw to that
    return text if len(text) <= MAX_QUOTE_CHARS else f"{text[:MAX_QUOTE_CHARS]}… ({len(text)} characters)"


def event(kind: str, **fields: Any) -> dict:
    """A server event: {"type": kind, ...fields}."""
    return {"type": kind, **fields}


def error_event(code: str, message: str, session_id: str | None = None) -> dict:
    if len(message) > MAX_ERROR_CHARS:  # quote() keeps client text short; this catches what it missed
        message = message[:MAX_ERROR_CHARS] + "…"
    return event("error", code=code, message=message, **({"session_id": session_id} if session_id else {}))
