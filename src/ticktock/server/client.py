"""A streaming client: send a recording as if it were a microphone, collect the server's events.

    events = await stream_audio("ws://127.0.0.1:8765", samples, decoder="sl")

Used by `ticktock talk`, the load test and the tests. `realtime=True` paces the
frames at the audio's own rate (a live talker); False sends them as fast as the
socket takes them.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Callable

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from ..audio import SAMPLE_RATE

CONNECTION_LOST = "connection_lost"  # not a server code: the client's record of a socket that closed mid-session


def pcm16_frame(samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> dict:
    """An `audio.append` message for float32 samples in [-1, 1]."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    return {"type": "audio.append", "audio": base64.b64encode(pcm).decode("ascii"), "format": "pcm16",
            "sample_rate": sample_rate}


async def stream_audio(url: str, samples: np.ndarray, sample_rate: int = SAMPLE_RATE, frame_ms: int = 100,
                       realtime: bool = True, on_event: Callable[[dict], None] | None = None,
                       timeout: float = 60.0, **start: object) -> list[dict]:
    """Start a session with options `start` (decoder, temperature, ...), stream `samples`, stop, and return every
    event up to `session.closed` (or up to the first error that prevents the session from starting). A connection
    that closes before `session.closed` ends the list with a `connection_lost` error (`lost_event`)."""
    events: list[dict] = []
    async with connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "session.start", **start}))
        first = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        events.append(first)
        if on_event:
            on_event(first)
        if first.get("type") != "session.started":
            return events

        async def receive() -> None:
            async for raw in ws:
                ev = json.loads(raw)
                events.append(ev)
                if on_event:
                    on_event(ev)
                if ev.get("type") == "session.closed":
                    return

        reader = asyncio.create_task(receive())
        step = max(1, int(sample_rate * frame_ms / 1000))
        t0 = time.monotonic()
        try:
            for i, a in enumerate(range(0, len(samples), step)):
                if realtime:  # frame i is due when its last sample has been "spoken"
                    await asyncio.sleep(max(0.0, t0 + (a + step) / sample_rate - time.monotonic()))
                await ws.send(json.dumps(pcm16_frame(samples[a:a + step], sample_rate)))
                if reader.done():
                    break
            await ws.send(json.dumps({"type": "session.stop"}))
        except ConnectionClosed:
            pass  # the reader ends on the same close
        try:
            await asyncio.wait_for(reader, timeout)
        except ConnectionClosed:
            pass
        if events[-1].get("type") != "session.closed":
            events.append(lost_event(ws))
            if on_event:
                on_event(events[-1])
    return events


def lost_event(ws: ClientConnection) -> dict:
    """An `error` the client records itself when the socket closes without `session.closed` (the server, or behind
    Ray Serve the session's replica, is gone: 1006 is a close without a close frame)."""
    reason = f": {ws.close_reason}" if ws.close_reason else ""
    return {"type": "error", "code": CONNECTION_LOST, "source": "client",
            "message": f"the connection closed before session.closed (close code {ws.close_code}{reason}); "
                       "the session is over: the server, or its replica, is gone"}
