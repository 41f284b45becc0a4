"""The serving wire protocol: client messages validated into dataclasses, server events built as dicts.

Every client message is one JSON object with a `type`; anything else becomes a
`ProtocolError` whose `code` the server sends back in an `error` event (the
session and the connection survive). docs/protocol.md is the reference.
"""

from __future__ import annotations

import json
import math
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
INTERNAL = "internal"

AUDIO_FORMATS = ("pcm16", "float32")
MAX_SYSTEM_CHARS = 2000
MAX_TOOL_RESULT_CHARS = 2000


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


def _session_start(msg: dict) -> SessionStart:
    temperature = float(_get(msg, "temperature", (int, float), 0.0))
    if not math.isfinite(temperature) or not 0.0 <= temperature <= 5.0:
        raise ProtocolError(BAD_OPTION, f"temperature must be in [0, 5], got {temperature}")
    system = _get(msg, "system", str)
    if system is not None and len(system) > MAX_SYSTEM_CHARS:
        raise ProtocolError(BAD_OPTION, f"system prompt longer than {MAX_SYSTEM_CHARS} characters")
    return SessionStart(decoder=_get(msg, "decoder", str, "sl"), temperature=temperature,
                        kv_policy=_get(msg, "kv_policy", str, "none"), kv_budget=_get(msg, "kv_budget", int),
                        system=system,
                        seed=_get(msg, "seed", int, 0), auto_tools=_get(msg, "auto_tools", bool, True),
                        tts=_get(msg, "tts", bool, True))


def _audio_append(msg: dict) -> AudioAppend:
    fmt = _get(msg, "format", str, "pcm16")
    if fmt not in AUDIO_FORMATS:
        raise ProtocolError(BAD_AUDIO, f"audio format must be one of {', '.join(AUDIO_FORMATS)}, got {fmt!r}")
    if "sample_rate" not in msg:
        raise ProtocolError(BAD_SAMPLE_RATE, "audio.append needs a 'sample_rate' field (Hz, e.g. 16000 or 48000)")
    channels = _get(msg, "channels", int, 1)
    if not 1 <= channels <= 8:
        raise ProtocolError(BAD_AUDIO, f"channels must be 1..8, got {channels}")
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
        msg = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as err:
        raise ProtocolError(BAD_JSON, f"message is not valid JSON: {err}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(BAD_MESSAGE, f"a message must be a JSON object, got {type(msg).__name__}")
    kind = msg.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, "a message needs a string 'type' field")
    if kind not in PARSERS:
        raise ProtocolError(UNKNOWN_TYPE, f"unknown message type {kind!r}; known: {', '.join(PARSERS)}")
    return PARSERS[kind](msg)


def event(kind: str, **fields: Any) -> dict:
    """A server event: {"type": kind, ...fields}."""
    return {"type": kind, **fields}


def error_event(code: str, message: str, session_id: str | None = None) -> dict:
    return event("error", code=code, message=message, **({"session_id": session_id} if session_id else {}))
