"""The transcription side channel in live sessions (shipped model, CPU): unit events carry what the user said, one
unit late (a trailing segment is decoded in the idle work before the next unit), exactly as the offline session
writes it; without it nothing changes, and asking a server that lacks it is a `bad_option` it survives."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
import torch
from websockets.asyncio.client import connect

from ticktock.audio import load_audio, split_chunks
from ticktock.commands.demo import EXAMPLES
from ticktock.model import DEFAULT_MODEL
from ticktock.runtime import load_runtime
from ticktock.server import ServerConfig
from ticktock.server.background import BackgroundServer
from ticktock.server.client import stream_audio
from ticktock.session import DuplexSession

SIDE = DEFAULT_MODEL.parent / "ticktock-tiny-side-channel"
pytestmark = pytest.mark.skipif(not (DEFAULT_MODEL / "model.safetensors").exists() or not SIDE.is_dir(),
                                reason="no shipped model or side channel")
QA = json.loads((EXAMPLES / "qa.json").read_text())


@pytest.fixture(scope="module")
def runtimes():
    torch.set_num_threads(1)
    return load_runtime(), load_runtime(side_channel=True)


@pytest.fixture(scope="module")
def qa_audio():
    return load_audio(EXAMPLES / "qa.wav")


def config(tmp_path_factory) -> ServerConfig:
    return ServerConfig(port=0, max_sessions=2, log_dir=str(tmp_path_factory.mktemp("sessions")), tts=False)


def health(srv: BackgroundServer) -> dict:
    return json.loads(urllib.request.urlopen(srv.http_url + "/health").read())


def test_units_carry_what_the_user_said(runtimes, qa_audio, tmp_path_factory):
    base, side = runtimes
    with BackgroundServer(config(tmp_path_factory), base, side) as srv:
        assert health(srv)["side_channel"] is True
        events = asyncio.run(stream_audio(srv.url, qa_audio, realtime=False, decoder="sl", system=QA["system"]))
        plain = asyncio.run(stream_audio(srv.url, qa_audio[:32000], realtime=False, side_channel=False))
    started, closed = events[0], events[-1]
    units = [e for e in events if e["type"] == "unit"]
    assert started["side_channel"] is True and closed["type"] == "session.closed"
    offline = DuplexSession(side.model, side.protocol, "ar", system=QA["system"],
                            side_channel="after_content").run(split_chunks(qa_audio))
    assert [(u["decision"], u["text"]) for u in units] == [(r.decision, r.text) for r in offline]
    # unit t's event carries unit t-1's transcript; session.closed the last unit's
    assert [(u["asr_unit"], u["asr"]) for u in units] == [(None, None)] + [(r.index, r.asr) for r in offline[:-1]]
    assert (closed["asr_unit"], closed["asr"]) == (offline[-1].index, offline[-1].asr)
    heard = " ".join(e["asr"] for e in events if e.get("asr"))
    assert "which month" in heard and "times eight" in heard, heard
    # a session that turns it off runs as on a server without it
    assert plain[0]["side_channel"] is False and plain[-1]["type"] == "session.closed"
    assert all("asr" not in e for e in plain)


def test_a_server_without_it_refuses_it_and_keeps_serving(runtimes, qa_audio, tmp_path_factory):
    base, _ = runtimes
    with BackgroundServer(config(tmp_path_factory), base) as srv:
        assert health(srv)["side_channel"] is False

        async def run():
            async with connect(srv.url) as ws:
                await ws.send(json.dumps({"type": "session.start", "side_channel": True}))
                refused = json.loads(await asyncio.wait_for(ws.recv(), 20))
                await ws.send(json.dumps({"type": "session.start", "side_channel": "yes"}))
                mistyped = json.loads(await asyncio.wait_for(ws.recv(), 20))
                return refused, mistyped

        refused, mistyped = asyncio.run(run())
        events = asyncio.run(stream_audio(srv.url, qa_audio[:32000], realtime=False))
        assert health(srv)["errors"] == 2
    assert refused["type"] == "error" and refused["code"] == "bad_option" and "--side-channel" in refused["message"]
    assert mistyped["code"] == "bad_message"
    assert events[0]["side_channel"] is False and events[-1]["type"] == "session.closed"
    assert [e["index"] for e in events if e["type"] == "unit"] == [0, 1]
    assert all("asr" not in e for e in events)
