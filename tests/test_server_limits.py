"""The server's limits against hostile or broken clients (CPU, in-process, a free port): idle sessions give their
slot back, a client's queued bytes are capped, errors quote at most a short prefix of what was sent, numbers a
client sends are validated as client errors, and no server path reaches a client."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from websockets.asyncio.client import connect

from ticktock.audio import load_audio, split_chunks
from ticktock.commands.demo import EXAMPLES
from ticktock.model import DEFAULT_MODEL
from ticktock.server import ServerConfig
from ticktock.server.background import BackgroundServer
from ticktock.server.client import pcm16_frame
from ticktock.server.live_session import LiveSession
from ticktock.server.wire import MAX_QUOTE_CHARS, AudioAppend, SessionStart, quote
from ticktock.session import DuplexSession

pytestmark = pytest.mark.skipif(not (DEFAULT_MODEL / "model.safetensors").exists(), reason="no shipped model")
IDLE_S = 2.0  # generous: a loaded machine must not make a streaming talker look idle
SHORT = 300  # an error message that quotes client text stays this short


@pytest.fixture(scope="module")
def server(runtime, tmp_path_factory):
    cfg = ServerConfig(port=0, max_sessions=2, log_dir=str(tmp_path_factory.mktemp("sessions")), tts=False,
                       idle_timeout=IDLE_S)
    with BackgroundServer(cfg, runtime) as srv:
        yield srv


@pytest.fixture(scope="module")
def capped(runtime, tmp_path_factory):
    cfg = ServerConfig(port=0, max_sessions=1, log_dir=str(tmp_path_factory.mktemp("capped")), tts=False,
                       max_queued_bytes=400_000)
    with BackgroundServer(cfg, runtime) as srv:
        yield srv


@pytest.fixture(scope="module")
def qa_audio() -> np.ndarray:
    return load_audio(EXAMPLES / "qa.wav")


def float32_frame(x: np.ndarray) -> dict:
    return {"type": "audio.append", "audio": base64.b64encode(x.astype("<f4").tobytes()).decode(),
            "format": "float32", "sample_rate": 16000}


async def recv_until(ws, kind: str, timeout: float = 20.0) -> list[dict]:
    """Events up to and including the first of type `kind`."""
    out = []
    while True:
        out.append(json.loads(await asyncio.wait_for(ws.recv(), timeout)))
        if out[-1]["type"] == kind:
            return out


async def answers(url: str, messages: list[str | dict], start: dict | None = None) -> list[dict]:
    """The one `error` each message gets, on one connection (in a session started with `start`, if given)."""
    async with connect(url, max_size=None) as ws:
        if start is not None:
            await ws.send(json.dumps({"type": "session.start", **start}))
            await recv_until(ws, "session.started")
        out = []
        for m in messages:
            await ws.send(m if isinstance(m, str) else json.dumps(m))
            out.append((await recv_until(ws, "error"))[-1])
        return out


# ---------------------------------------------------------------- idle sessions
def test_sessions_without_audio_are_closed_and_free_their_slots(server, qa_audio):
    """Every slot held by a client that sends nothing: each gets idle_timeout, then a newcomer gets a session."""
    async def run():
        holders = [await connect(server.url) for _ in range(2)]
        for ws in holders:
            await ws.send(json.dumps({"type": "session.start", "decoder": "ar"}))
            await recv_until(ws, "session.started")
        late = await connect(server.url)
        await late.send(json.dumps({"type": "session.start", "decoder": "ar"}))
        refused = (await recv_until(late, "error"))[-1]
        closed = [await recv_until(ws, "session.closed", timeout=IDLE_S + 10) for ws in holders]
        await late.send(json.dumps({"type": "session.start", "decoder": "ar"}))
        admitted = (await recv_until(late, "session.started"))[-1]
        # a talker streaming in real time for longer than the timeout is never idle
        for a in range(0, int((IDLE_S + 0.6) * 16000), 1600):
            await late.send(json.dumps(float32_frame(qa_audio[a:a + 1600])))
            await asyncio.sleep(0.1)
        await late.send(json.dumps({"type": "session.stop"}))
        talked = await recv_until(late, "session.closed")
        # an idle-closed connection stays open and may start again
        await holders[0].send(json.dumps({"type": "session.start", "decoder": "ar"}))
        again = (await recv_until(holders[0], "session.started"))[-1]
        for ws in (*holders, late):
            await ws.close()
        return refused, closed, admitted, talked, again

    refused, closed, admitted, talked, again = asyncio.run(run())
    assert refused["code"] == "server_busy"
    for events in closed:
        assert [(e["type"], e.get("code")) for e in events] == [("error", "idle_timeout"), ("session.closed", None)]
        assert events[-1]["reason"] == "idle_timeout" and f"no audio for {IDLE_S:g} s" in events[0]["message"]
    assert admitted["type"] == "session.started" and again["type"] == "session.started"
    assert not [e for e in talked if e["type"] == "error"] and talked[-1]["reason"] == "stop"
    assert [e["index"] for e in talked if e["type"] == "unit"] == list(range(int(IDLE_S) + 1))


# ---------------------------------------------------------------- queued bytes
def test_a_message_past_the_queued_bytes_cap_is_dropped_and_nothing_else(capped, runtime, qa_audio):
    async def run():
        async with connect(capped.url) as ws:
            await ws.send(json.dumps({"type": "session.start", "decoder": "ar"}))
            await recv_until(ws, "session.started")
            await ws.send(json.dumps(float32_frame(np.zeros(5 * 16000, np.float32))))  # 427 kB of base64 > 400 kB
            dropped = (await recv_until(ws, "error"))[-1]
            for a in range(0, 3 * 16000, 1600):  # then ordinary frames: decoded as if nothing had happened
                await ws.send(json.dumps(float32_frame(qa_audio[a:a + 1600])))
            await ws.send(json.dumps({"type": "session.stop"}))
            return dropped, await recv_until(ws, "session.closed")

    dropped, events = asyncio.run(run())
    assert dropped["code"] == "queue_full" and "400000" in dropped["message"] and dropped["session_id"]
    units = [e for e in events if e["type"] == "unit"]
    offline = DuplexSession(runtime.model, runtime.protocol, "ar").run(split_chunks(qa_audio[:48000]))
    assert [(u["decision"], u["text"]) for u in units] == [(r.decision, r.text) for r in offline]
    assert not [e for e in events if e["type"] == "error"]


def test_queued_bytes_count_chunks_and_partial_audio(tmp_path):
    async def run():
        rt = SimpleNamespace(protocol=SimpleNamespace(chunk_seconds=1.0, chunk_samples=16000))
        live = LiveSession(SessionStart(), rt, SimpleNamespace(), _ignore, tmp_path)
        live.append(AudioAppend(pcm16_frame(np.zeros(24000, np.float32))["audio"], "pcm16", 16000))
        return live.queued_bytes()

    assert asyncio.run(run()) == 4 * 24000  # one 1 s chunk waiting + 0.5 s towards the next, as float32


async def _ignore(ev: dict) -> None:
    pass


# ---------------------------------------------------------------- quoting client text
HUGE = "x" * (15 * 1024 * 1024)


def test_errors_quote_a_short_prefix_of_what_was_sent(server):
    ok = pcm16_frame(np.zeros(1600, np.float32))
    before = asyncio.run(answers(server.url, [
        {"type": HUGE},
        {"type": "session.start", "decoder": HUGE[:100_000]},
        {"type": "session.start", "kv_policy": HUGE[:100_000]},
        {**ok, "format": HUGE[:100_000]},
    ]))
    during = asyncio.run(answers(server.url, [
        {**ok, "sample_rate": HUGE[:100_000]},
        {"type": "tool.result", "call_id": HUGE[:100_000], "result": "x"},
    ], start={"decoder": "ar"}))
    codes = [e["code"] for e in before + during]
    assert codes == ["unknown_type", "bad_option", "bad_option", "bad_audio", "bad_sample_rate", "unknown_call"]
    for ev in before + during:
        assert len(ev["message"]) < SHORT and "x" * MAX_QUOTE_CHARS in ev["message"] and "…" in ev["message"], ev
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(server.http_url + "/" + "y" * 4000)
    assert len(err.value.read()) < SHORT


def test_quote():
    assert quote("decoder") == "'decoder'" and quote(16000) == "16000"
    assert quote("z" * 10_000) == f"{'z' * MAX_QUOTE_CHARS!r}… (10000 characters)"
    assert quote(10**400).startswith("1000") and len(quote(10**400)) < 100


# ---------------------------------------------------------------- numbers
DIGITS_5000 = "9" * 5000
BAD_NUMBERS = [  # (raw message, code): each a client error, never `internal`
    ('{"type": "session.start", "seed": %d}' % 2**70, "bad_option"),
    ('{"type": "session.start", "seed": -1}', "bad_option"),
    ('{"type": "session.start", "seed": %s}' % DIGITS_5000, "bad_json"),
    ('{"type": "session.start", "anything": -%s}' % DIGITS_5000, "bad_json"),
    ('{"type": "session.start", "temperature": %d}' % 10**400, "bad_option"),
    ('{"type": "session.start", "temperature": 1e400}', "bad_option"),
    ('{"type": "session.start", "temperature": -0.5}', "bad_option"),
    ('{"type": "session.start", "temperature": NaN}', "bad_json"),
    ('{"type": "session.start", "temperature": Infinity}', "bad_json"),
    ('{"type": "session.start", "temperature": -Infinity}', "bad_json"),
    ('{"type": "session.start", "kv_policy": "streaming_llm", "kv_budget": %d}' % 2**70, "bad_option"),
    ('{"type": "session.start", "kv_policy": "streaming_llm", "kv_budget": 0}', "bad_option"),
    ('{"type": "session.start", "kv_policy": "streaming_llm", "kv_budget": -5}', "bad_option"),
    ('{"type": "audio.append", "audio": "AAAA", "sample_rate": 16000, "channels": %d}' % 2**70, "bad_audio"),
    ('{"type": "audio.append", "audio": "AAAA", "sample_rate": 16000, "channels": -1}', "bad_audio"),
]
AUDIO = pcm16_frame(np.zeros(1600, np.float32))["audio"]
BAD_RATES = [  # in a session: the sample rate is checked when the audio is taken in
    '{"type": "audio.append", "audio": "%s", "sample_rate": %d}' % (AUDIO, 10**400),
    '{"type": "audio.append", "audio": "%s", "sample_rate": %d}' % (AUDIO, 2**70),
    '{"type": "audio.append", "audio": "%s", "sample_rate": -16000}' % AUDIO,
    '{"type": "audio.append", "audio": "%s", "sample_rate": 1e400}' % AUDIO,
    '{"type": "audio.append", "audio": "%s", "sample_rate": -1e400}' % AUDIO,
]


def test_numbers_are_validated_as_client_errors(server):
    before = asyncio.run(answers(server.url, [raw for raw, _ in BAD_NUMBERS]))
    during = asyncio.run(answers(server.url, BAD_RATES + ['{"type": "audio.append", "audio": "%s", "sample_rate": '
                                                          'NaN}' % AUDIO], start={"decoder": "ar"}))
    assert [e["code"] for e in before] == [code for _, code in BAD_NUMBERS]
    assert [e["code"] for e in during] == ["bad_sample_rate"] * len(BAD_RATES) + ["bad_json"]
    for ev in before + during:
        assert len(ev["message"]) < SHORT and "Traceback" not in ev["message"], ev
    # the largest seed is fine, and the server is unharmed
    started = asyncio.run(answers(server.url, [], start={"decoder": "ar", "seed": 2**63 - 1, "temperature": 5}))
    assert started == []


# ---------------------------------------------------------------- server paths
def test_no_server_path_reaches_a_client(server, qa_audio):
    async def run():
        async with connect(server.url) as ws:
            await ws.send(json.dumps({"type": "session.start", "decoder": "ar"}))
            events = await recv_until(ws, "session.started")
            await ws.send(json.dumps(float32_frame(qa_audio[:16000])))
            await ws.send(json.dumps({"type": "session.stop"}))
            return events + await recv_until(ws, "session.closed")

    events = asyncio.run(run())
    log_dir = server.server.config.log_dir
    assert log_dir not in json.dumps(events)
    started, closed = events[0], events[-1]
    assert started["log_path"] == closed["log_path"] == Path(started["log_path"]).name
    assert (Path(log_dir) / closed["log_path"]).exists()


def test_a_server_failure_reaches_the_client_without_its_text(runtime, tmp_path):
    """A log dir that cannot be created: the client gets `internal` (no path, no exception text); the server goes on."""
    (tmp_path / "file").write_text("not a directory")
    bad_dir = str(tmp_path / "file" / "sessions")
    cfg = ServerConfig(port=0, max_sessions=1, log_dir=bad_dir, tts=False)
    with BackgroundServer(cfg, runtime) as srv:
        first = asyncio.run(answers(srv.url, [{"type": "session.start", "decoder": "ar"}]))[0]
        second = asyncio.run(answers(srv.url, [{"type": "session.start", "decoder": "ar"}]))[0]
    for ev in (first, second):  # the slot was given back: the same failure again, not server_busy
        assert ev["code"] == "internal" and str(tmp_path) not in ev["message"] and "sessions" not in ev["message"], ev
