"""The Ray Serve deployment on CPU (`ticktock.server.ray_serve`): two replicas of the tiny model, one session each.
A session stays on its replica (every event carries that replica's id), a session past capacity gets `server_busy`,
admitted sessions decode exactly what a session alone decodes, and a killed replica ends only its own sessions, with
a clear `connection_lost` on the client. Slow (about a minute: a local Ray cluster and two replicas start)."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

pytest.importorskip("ray.serve")

from websockets.asyncio.client import connect  # noqa: E402

from ticktock.audio import load_audio, split_chunks  # noqa: E402
from ticktock.commands.demo import EXAMPLES  # noqa: E402
from ticktock.model import DEFAULT_MODEL  # noqa: E402
from ticktock.server import ServerConfig  # noqa: E402
from ticktock.server.client import CONNECTION_LOST, pcm16_frame, stream_audio  # noqa: E402
from ticktock.server.loadtest import free_port  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (DEFAULT_MODEL / "model.safetensors").exists(), reason="no shipped model")]
SECONDS = 3


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    import ray
    from ray import serve

    from ticktock.server import ray_serve

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    port = free_port()
    try:
        cfg = ServerConfig(max_sessions=1, log_dir=str(tmp_path_factory.mktemp("sessions")), tts=False)
        ray_serve.run(ray_serve.deployment(cfg, replicas=2, threads=1), port=port)
        yield f"ws://127.0.0.1:{port}"
    finally:
        serve.shutdown()
        ray.shutdown()


@pytest.fixture(scope="module")
def qa_audio() -> np.ndarray:
    return load_audio(EXAMPLES / "qa.wav")[:SECONDS * 16000]


async def started(ws) -> dict:
    await ws.send(json.dumps({"type": "session.start", "decoder": "ar"}))
    return json.loads(await asyncio.wait_for(ws.recv(), 60))


async def finish(ws, audio: np.ndarray) -> list[dict]:
    for a in range(0, len(audio), 1600):
        await ws.send(json.dumps(pcm16_frame(audio[a:a + 1600])))
    await ws.send(json.dumps({"type": "session.stop"}))
    events = []
    while not events or events[-1]["type"] != "session.closed":
        events.append(json.loads(await asyncio.wait_for(ws.recv(), 60)))
    return events


def test_sessions_stay_on_their_replica_and_past_capacity_get_server_busy(url, qa_audio):
    async def run():
        # one after another, so Ray's router sees the first connection before it routes the second
        a = await connect(url)
        first = await started(a)
        b = await connect(url)
        second = await started(b)
        late = await connect(url)
        refused = await started(late)
        events = await asyncio.gather(finish(a, qa_audio), finish(b, qa_audio))
        retried = await started(late)  # a slot is free again
        for ws in (a, b, late):
            await ws.close()
        return first, second, refused, events, retried

    first, second, refused, events, retried = asyncio.run(run())
    assert first["type"] == second["type"] == "session.started"
    assert first["replica"] != second["replica"]  # the router spread them: one session per replica
    assert refused["type"] == "error" and refused["code"] == "server_busy" and refused["replica"]
    assert retried["type"] == "session.started"

    from ticktock.runtime import load_runtime
    from ticktock.session import DuplexSession

    rt = load_runtime()
    offline = DuplexSession(rt.model, rt.protocol, "ar").run(split_chunks(qa_audio))
    for start, evs in zip((first, second), events):
        assert {e["replica"] for e in evs} == {start["replica"]}  # affinity: every event from the session's replica
        assert not [e for e in evs if e["type"] == "error"]
        units = [e for e in evs if e["type"] == "unit"]
        assert [(u["decision"], u["text"]) for u in units] == [(r.decision, r.text) for r in offline]


def test_a_killed_replica_ends_only_its_own_sessions(url, qa_audio):
    from ticktock.server.ray_serve import kill_replica, wait_running

    wait_running(2)
    talk = np.concatenate([qa_audio, np.zeros(2 * 16000, np.float32)])  # 5 s in real time

    async def run():
        firsts: list[asyncio.Future] = []

        async def begin() -> asyncio.Task:  # one after another, as above: one session per replica
            firsts.append(asyncio.get_running_loop().create_future())
            note = lambda ev, f=firsts[-1]: f.done() or f.set_result(ev)  # noqa: E731
            task = asyncio.create_task(stream_audio(url, talk, decoder="ar", on_event=note))
            await asyncio.wait_for(asyncio.shield(firsts[-1]), 60)
            return task

        sessions = [await begin(), await begin()]
        await asyncio.sleep(1.5)
        await asyncio.to_thread(kill_replica, firsts[0].result()["replica"])
        return [f.result() for f in firsts], await asyncio.gather(*sessions)

    (s0, s1), (killed, kept) = asyncio.run(run())
    assert s0["type"] == s1["type"] == "session.started" and s0["replica"] != s1["replica"]
    assert killed[-1]["type"] == "error" and killed[-1]["code"] == CONNECTION_LOST
    assert [e["type"] for e in kept if e["type"] == "error"] == []
    assert kept[-1]["type"] == "session.closed" and kept[-1]["units"] == len(talk) // 16000
    assert {e["replica"] for e in kept} == {s1["replica"]}
