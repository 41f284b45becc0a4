"""The real-time server on the shipped model (CPU, in-process, a free port): a normal session equals the offline
session, every bad input gets a clear `error` and nothing else changes, disconnects lose nothing computed, and
sessions over the maximum are refused without disturbing the others."""

from __future__ import annotations

import asyncio
import base64
import json
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from websockets.asyncio.client import connect

from ticktock.audio import load_audio, resample, split_chunks
from ticktock.commands.demo import EXAMPLES
from ticktock.decoding.registry import DECODERS
from ticktock.model import DEFAULT_MODEL
from ticktock.server import ProtocolError, ServerConfig
from ticktock.server.background import BackgroundServer
from ticktock.server.client import pcm16_frame, stream_audio
from ticktock.server.live_session import LiveSession, PendingCall
from ticktock.server.log import SessionLog, read_log
from ticktock.server.wire import SessionStart, ToolResult
from ticktock.server.resampler import StreamResampler
from ticktock.session import DuplexSession

pytestmark = pytest.mark.skipif(not (DEFAULT_MODEL / "model.safetensors").exists(), reason="no shipped model")
QA = json.loads((EXAMPLES / "qa.json").read_text())


@pytest.fixture(scope="module")
def server(runtime, tmp_path_factory):
    cfg = ServerConfig(port=0, max_sessions=2, log_dir=str(tmp_path_factory.mktemp("sessions")), tts=False)
    with BackgroundServer(cfg, runtime) as srv:
        yield srv


@pytest.fixture(scope="module")
def qa_audio() -> np.ndarray:
    return load_audio(EXAMPLES / "qa.wav")


def float32_frame(x: np.ndarray, rate: int = 16000) -> dict:
    return {"type": "audio.append", "audio": base64.b64encode(x.astype("<f4").tobytes()).decode(), "format": "float32",
            "sample_rate": rate}


async def recv_until(ws, kind: str, timeout: float = 20.0) -> list[dict]:
    """Events up to and including the first of type `kind`."""
    out = []
    while True:
        ev = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        out.append(ev)
        if ev["type"] == kind:
            return out


def log_file(srv: BackgroundServer, ev: dict) -> Path:
    """The session log of a `session.started`/`session.closed` event: the server names it inside its log dir."""
    assert Path(ev["log_path"]).name == ev["log_path"], "a server path reached the client"
    return Path(srv.server.config.log_dir) / ev["log_path"]


def wait_for_close(log_path: Path, timeout: float = 20.0) -> list[dict]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        records = read_log(log_path) if log_path.exists() else []
        if records and records[-1]["type"] == "session.closed":
            return records
        time.sleep(0.05)
    raise AssertionError(f"{log_path} never got session.closed")


# ---------------------------------------------------------------- a normal session
def test_streamed_session_equals_offline_session(server, runtime, qa_audio):
    """Odd frame sizes, sent faster than real time: the units are exactly the offline session's (greedy is lossless)."""
    async def run():
        async with connect(server.url) as ws:
            await ws.send(json.dumps({"type": "session.start", "decoder": "sl", "system": QA["system"]}))
            started = (await recv_until(ws, "session.started"))[-1]
            for a in range(0, len(qa_audio), 777):
                await ws.send(json.dumps(float32_frame(qa_audio[a:a + 777])))
            await ws.send(json.dumps({"type": "session.stop"}))
            return started, await recv_until(ws, "session.closed")

    started, events = asyncio.run(run())
    units = [e for e in events if e["type"] == "unit"]
    offline = DuplexSession(runtime.model, runtime.protocol, "ar", system=QA["system"]).run(split_chunks(qa_audio))
    assert [(u["decision"], u["text"]) for u in units] == [(r.decision, r.text) for r in offline]
    assert [u["index"] for u in units] == list(range(16)) and any(u["decision"] == "speak" for u in units)
    assert all(u["latency_ms"] > 0 and u["post_audio_ms"] > 0 and u["resident_slots"] > 0 for u in units)
    closed = events[-1]
    assert closed["units"] == 16 and closed["reason"] == "stop" and closed["log_path"] == started["log_path"]
    logged = [r for r in read_log(log_file(server, closed)) if r["type"] == "unit"]
    assert [r["index"] for r in logged] == list(range(16))


def test_client_streams_pcm16_at_another_rate(server, qa_audio):
    """48 kHz PCM16 in 100 ms frames via the client: resampled, chunked, a complete session."""
    x48 = resample(qa_audio[:5 * 16000 + 5000], 16000, 48000)  # 5.3 s: the last chunk is zero-padded
    events = asyncio.run(stream_audio(server.url, x48, 48000, realtime=False, decoder="ar"))
    assert [e["index"] for e in events if e["type"] == "unit"] == list(range(6))
    assert events[-1]["type"] == "session.closed" and not [e for e in events if e["type"] == "error"]


def test_http_serves_the_page_and_health(server):
    page = urllib.request.urlopen(server.http_url + "/").read().decode()
    assert "ticktock" in page and "/static/app.js" in page
    assert urllib.request.urlopen(server.http_url + "/static/app.js").headers["Content-Type"].startswith("text/javascript")
    health = json.loads(urllib.request.urlopen(server.http_url + "/health").read())
    assert health["status"] == "ok" and health["max_sessions"] == 2
    assert health["decoders"] == list(DECODERS) and health["max_system_chars"] == 2000
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(server.http_url + "/static/../app.py")


# ---------------------------------------------------------------- bad input
BAD_BEFORE_START = [
    ("{not json", "bad_json"),
    (json.dumps([1, 2]), "bad_message"),
    (json.dumps({"type": "hello"}), "unknown_type"),
    (b"\x00\xff\x13garbage", "binary_frame"),
    (json.dumps(pcm16_frame(np.zeros(1600, np.float32))), "no_session"),
    (json.dumps({"type": "session.start", "decoder": "nope"}), "bad_option"),
    (json.dumps({"type": "session.start", "kv_policy": "nope"}), "bad_option"),
    (json.dumps({"type": "session.start", "temperature": "hot"}), "bad_message"),
]


def _bad_frames() -> list[tuple[dict, str]]:
    ok = pcm16_frame(np.zeros(1600, np.float32))
    nan = np.zeros(1600, np.float32)
    nan[7] = np.nan
    return [
        ({k: v for k, v in ok.items() if k != "sample_rate"}, "bad_sample_rate"),
        ({**ok, "sample_rate": "16000"}, "bad_sample_rate"),
        ({**ok, "sample_rate": 100}, "bad_sample_rate"),
        ({**ok, "sample_rate": 44100.5}, "bad_sample_rate"),
        (float32_frame(nan), "bad_audio"),
        (float32_frame(np.full(1600, np.inf, np.float32)), "bad_audio"),
        (float32_frame(np.zeros(int(10.5 * 16000), np.float32)), "frame_too_long"),
        ({**ok, "audio": "***not base64***"}, "bad_audio"),
        ({**ok, "audio": base64.b64encode(b"\x01\x02\x03").decode()}, "bad_audio"),
        ({**ok, "format": "mp3"}, "bad_audio"),
        ({**ok, "sample_rate": 8000}, "bad_sample_rate"),  # the session's rate was fixed at 16 kHz by the first frame
        ({"type": "tool.result", "result": "x"}, "unknown_call"),
        ({"type": "tool.result", "call_id": "call_99", "result": "x"}, "unknown_call"),
        ({"type": "session.start"}, "session_active"),
    ]


def test_every_bad_input_gets_an_error_and_the_session_survives(server, runtime, qa_audio):
    async def run():
        async with connect(server.url) as ws:
            errors = []
            for raw, code in BAD_BEFORE_START:
                await ws.send(raw)
                errors.append(((await recv_until(ws, "error"))[-1], code))
            await ws.send(json.dumps({"type": "session.start", "decoder": "sl", "system": QA["system"]}))
            await recv_until(ws, "session.started")
            await ws.send(json.dumps(float32_frame(qa_audio[:8000])))  # half a chunk of good audio
            for frame, code in _bad_frames():
                await ws.send(json.dumps(frame))
                errors.append(((await recv_until(ws, "error"))[-1], code))
            for a in range(8000, 3 * 16000, 1600):  # the rest of three chunks: units as if nothing bad was sent
                await ws.send(json.dumps(float32_frame(qa_audio[a:a + 1600])))
            await ws.send(json.dumps({"type": "session.stop"}))
            return errors, await recv_until(ws, "session.closed")

    errors, events = asyncio.run(run())
    for ev, code in errors:
        assert ev["code"] == code, ev
        assert len(ev["message"]) > 10
    units = [e for e in events if e["type"] == "unit"]
    offline = DuplexSession(runtime.model, runtime.protocol, "ar", system=QA["system"]).run(split_chunks(qa_audio[:48000]))
    assert [(u["decision"], u["text"]) for u in units] == [(r.decision, r.text) for r in offline]
    assert not [e for e in events if e["type"] == "error"]


def test_a_client_far_ahead_of_real_time_is_held_back(server):
    async def run():
        async with connect(server.url) as ws:
            await ws.send(json.dumps({"type": "session.start", "decoder": "ar"}))
            await recv_until(ws, "session.started")
            ten_seconds = json.dumps(float32_frame(np.zeros(160000, np.float32)))
            for _ in range(14):  # 140 s at once
                await ws.send(ten_seconds)
            return (await recv_until(ws, "error"))[-1]  # then leave: queued chunks are dropped

    assert asyncio.run(run())["code"] == "backlog_full"


def test_abrupt_disconnect_mid_unit_loses_nothing(server, qa_audio):
    async def run():
        ws = await connect(server.url)
        await ws.send(json.dumps({"type": "session.start", "decoder": "sl"}))
        started = (await recv_until(ws, "session.started"))[-1]
        await ws.send(json.dumps(float32_frame(qa_audio[:3 * 16000])))
        received = [e for e in await recv_until(ws, "unit") if e["type"] == "unit"]
        await ws.send(json.dumps(float32_frame(qa_audio[3 * 16000:5 * 16000])))  # two more units start computing
        ws.transport.abort()  # no close frame: the client just vanishes
        return started, received

    started, received = asyncio.run(run())
    records = wait_for_close(log_file(server, started))
    logged = [r["index"] for r in records if r["type"] == "unit"]
    assert logged == list(range(len(logged))) and len(logged) >= len(received) >= 1
    assert records[-1]["reason"] == "disconnect"
    # the server goes on serving new clients
    events = asyncio.run(stream_audio(server.url, qa_audio[:2 * 16000], realtime=False, decoder="ar"))
    assert sum(e["type"] == "unit" for e in events) == 2 and events[-1]["type"] == "session.closed"


def test_sessions_over_the_maximum_are_refused_and_others_undisturbed(server, qa_audio):
    async def run():
        a, b, c = [await connect(server.url) for _ in range(3)]
        for ws in (a, b):
            await ws.send(json.dumps({"type": "session.start", "decoder": "ar"}))
            await recv_until(ws, "session.started")
        await c.send(json.dumps({"type": "session.start", "decoder": "ar"}))
        refused = (await recv_until(c, "error"))[-1]
        for ws in (a, b):
            await ws.send(json.dumps(float32_frame(qa_audio[:2 * 16000])))
            await ws.send(json.dumps({"type": "session.stop"}))
        done = [await recv_until(ws, "session.closed") for ws in (a, b)]
        await c.send(json.dumps({"type": "session.start", "decoder": "ar"}))  # a slot is free again
        retried = (await recv_until(c, "session.started"))[-1]
        for ws in (a, b, c):
            await ws.close()
        return refused, done, retried

    refused, done, retried = asyncio.run(run())
    assert refused["code"] == "server_busy" and "2" in refused["message"]
    for events in done:
        assert [e["index"] for e in events if e["type"] == "unit"] == [0, 1]
        assert not [e for e in events if e["type"] == "error"]
    assert retried["type"] == "session.started"


# ---------------------------------------------------------------- tool calls
@pytest.fixture(scope="module")
def tool_session():
    """A held-out tool request rendered with espeak-ng (0.1 s): (system prompt, 16 kHz audio)."""
    from ticktock.scenarios.espeak import EspeakRenderer, espeak_available
    from ticktock.scenarios.suites import render_script, script_at

    if not espeak_available():
        pytest.skip("espeak-ng is not installed")
    r = render_script(script_at("heldout", 7), "heldout", EspeakRenderer())  # "set a timer for ... minutes"
    return r.script.system, r.audio.astype(np.float32)


def test_tool_call_answered_by_the_mock_tool_when_the_client_is_silent(server, tool_session):
    system, audio = tool_session
    events = asyncio.run(stream_audio(server.url, audio, realtime=False, decoder="sl", system=system))
    calls = [e for e in events if e["type"] == "tool.call"]
    if not calls:
        pytest.skip("the model made no tool call on this rendering (another espeak-ng build?)")
    answer = next(e for e in events if e["type"] == "tool.result")
    assert answer["source"] == "server" and answer["call_id"] == calls[0]["call_id"]
    assert answer["result"].startswith("timer set")
    units = {e["index"]: e for e in events if e["type"] == "unit"}
    assert units[calls[0]["unit"] + 1]["tool_result"] == answer["result"]  # the model read it in the next unit


def test_a_client_tool_result_takes_precedence(server, tool_session):
    system, audio = tool_session

    async def run():
        async with connect(server.url) as ws:
            await ws.send(json.dumps({"type": "session.start", "decoder": "sl", "system": system}))
            await recv_until(ws, "session.started")
            for a in range(0, len(audio) - 16000, 16000):  # one chunk at a time, to answer a call before the next
                await ws.send(json.dumps(float32_frame(audio[a:a + 16000])))
                if (await recv_until(ws, "unit"))[-1]["tool_call"]:
                    call = (await recv_until(ws, "tool.call"))[-1]
                    break
            else:
                return None
            await ws.send(json.dumps({"type": "tool.result", "call_id": call["call_id"], "result": "timer set, 9 minutes"}))
            await ws.send(json.dumps(float32_frame(audio[a + 16000:a + 32000])))
            await ws.send(json.dumps({"type": "session.stop"}))
            return await recv_until(ws, "session.closed")

    events = asyncio.run(run())
    if events is None:
        pytest.skip("the model made no tool call on this rendering (another espeak-ng build?)")
    unit = next(e for e in events if e["type"] == "unit")
    assert unit["tool_result"] == "timer set, 9 minutes"
    assert not [e for e in events if e["type"] in ("tool.result", "error")]  # the server did not answer it


# ---------------------------------------------------------------- pieces
@pytest.mark.parametrize("rate", [8000, 22050, 44100, 48000])
def test_stream_resampler_equals_offline_resampling(rate):
    rng = np.random.default_rng(rate)
    x = rng.standard_normal(rate * 2 + 123).astype(np.float32) * 0.1
    rs, out, a = StreamResampler(rate), [], 0
    while a < len(x):
        n = int(rng.integers(1, rate // 5))
        rs.push(x[a:a + n])
        out.append(rs.pull())
        a += n
    out.append(rs.flush())
    np.testing.assert_allclose(np.concatenate(out), resample(x, rate, 16000), atol=1e-5)


def test_tool_results_client_first_then_mock_tool(tmp_path):
    sent = []

    async def send(ev):
        sent.append(ev)

    async def run():
        rt = SimpleNamespace(protocol=SimpleNamespace(chunk_seconds=1.0, chunk_samples=16000))
        live = LiveSession(SessionStart(), rt, SimpleNamespace(), send, tmp_path)
        live.log = SessionLog(tmp_path / "log.jsonl")
        live.calls = [PendingCall("call_3", 'set_timer(minutes=5)', 3), PendingCall("call_5", "no_such_tool()", 5)]
        live.tool_result(ToolResult("client says hi"))  # no call_id: the latest waiting call
        first = await live._next_tool_result()
        second = await live._next_tool_result()
        with pytest.raises(ProtocolError) as late:
            live.tool_result(ToolResult("too late", "call_3"))
        return first, second, late.value.code

    first, second, late = asyncio.run(run())
    assert first == "timer set, 5 minutes"  # call_3 had no client result: the mock tool answered it
    assert second == "client says hi"
    assert late == "tool_result_late"
    assert [e["source"] for e in sent if e["type"] == "tool.result"] == ["server"]


def test_a_full_kv_cache_ends_the_session_cleanly(runtime, qa_audio, tmp_path):
    """Without eviction a session holds at most max_slots: it closes with context_full; the connection goes on."""
    cfg = ServerConfig(port=0, max_sessions=1, log_dir=str(tmp_path), tts=False, max_slots=840)
    with BackgroundServer(cfg, runtime) as srv:
        events = asyncio.run(stream_audio(srv.url, qa_audio, realtime=False, decoder="ar"))
        again = asyncio.run(stream_audio(srv.url, qa_audio[:16000], realtime=False, decoder="ar"))
    units = [e for e in events if e["type"] == "unit"]
    assert 1 <= len(units) < 16 and [e["code"] for e in events if e["type"] == "error"] == ["context_full"]
    assert events[-1]["type"] == "session.closed" and events[-1]["reason"] == "context_full"
    assert [e["type"] for e in again][-2:] == ["unit", "session.closed"]
