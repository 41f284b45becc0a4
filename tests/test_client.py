"""The streaming client against a server that goes away mid-session (as a Ray Serve replica that dies does): the
session's events end with the client's own `connection_lost` error, naming the close code, instead of an
exception that would lose the events received so far."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection, serve

from ticktock.server.client import CONNECTION_LOST, stream_audio


@pytest.mark.parametrize("close", ["frame", "abrupt"])
def test_a_connection_closed_mid_session_ends_with_connection_lost(close):
    async def vanishing(ws: ServerConnection) -> None:
        await ws.recv()  # session.start
        await ws.send(json.dumps({"type": "session.started", "session_id": "s"}))
        await ws.recv()  # the first audio frame
        await ws.send(json.dumps({"type": "unit", "session_id": "s", "index": 0}))
        if close == "frame":
            await ws.close(1011, "replica gone")
        else:
            ws.transport.abort()  # no close frame: what the client of a killed process sees

    async def run() -> list[dict]:
        async with serve(vanishing, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            # 3 frames: the ones this server leaves unread stay under websockets' read limit, so its close completes
            return await stream_audio(f"ws://127.0.0.1:{port}", np.zeros(1600 * 3, np.float32), realtime=False,
                                      timeout=10)

    events = asyncio.run(run())
    assert [e["type"] for e in events] == ["session.started", "unit", "error"]
    lost = events[-1]
    assert lost["code"] == CONNECTION_LOST and lost["source"] == "client"
    assert ("close code 1011: replica gone" if close == "frame" else "close code 1006") in lost["message"]
