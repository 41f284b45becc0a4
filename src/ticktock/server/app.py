"""The server: WebSocket sessions and the browser page from one process (docs/design.md §8).

    server = Server(ServerConfig(port=8765))
    await server.start(); ...; await server.close()

Any HTTP GET that is not a WebSocket upgrade is answered from `static/` (`/` is
the page, `/health` a JSON status). Each WebSocket connection holds at most one
live session at a time. Nothing a client sends can end the server: every
failure becomes an `error` event on that connection only, and no client can hold
more than its share: a session without audio for `idle_timeout` s is closed, and
a connection's queued bytes are capped (`max_queued_bytes`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
from dataclasses import dataclass, replace
from pathlib import Path
from typing import AsyncIterator, Protocol

import numpy as np
import torch
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from ..decoding.registry import DECODERS
from ..engine import borrowed_engine
from ..runtime import Runtime, load_runtime
from ..session import DuplexSession
from ..session.heap import release_heap, settle_heap
from .draft_gate import live_decoder
from .live_session import SIDE_CHANNEL, LiveSession
from .wire import (BAD_OPTION, INTERNAL, MAX_SYSTEM_CHARS, NO_SESSION, QUEUE_FULL, SERVER_BUSY, SESSION_ACTIVE, AudioAppend,
                       ProtocolError, SessionStart, SessionStop, ToolResult, error_event, parse_client, quote)
from .scheduler import DRAFT, Scheduler, ServerBusy
from .speech import Speaker

STATIC = Path(__file__).resolve().parent / "static"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # 10 s of 192 kHz float32 in base64 fits; bigger frames close the socket (1009)
log = logging.getLogger("ticktock.server")


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765  # 0: any free port (see Server.port)
    max_sessions: int = 4
    log_dir: str = "runs/sessions"
    model: str | None = None
    device: str = "cpu"
    engine: str = "auto"  # auto | eager | fast (engines are pooled: CUDA graphs captured once, not per session)
    dtype: str = "float32"
    tts: bool = True
    max_slots: int = 8192  # KV slots per session: ≈ 6-10 min of talk on ticktock-tiny without eviction
    idle_timeout: float = 30.0  # seconds without audio before a session is closed (idle_timeout); 0: never
    # a client's messages not yet handled + its session's audio not yet decoded: one full-size message and a
    # full 120 s backlog fit, a client that keeps sending faster than the server takes it in does not
    max_queued_bytes: int = 32 * 1024 * 1024
    side_channel: bool = False  # also hold the model with its transcription side channel; sessions use it by default
    replica: str | None = None  # behind Ray Serve: this replica's id, sent on every event (session affinity shows)


class Socket(Protocol):
    """What a connection needs of its WebSocket: a websockets `ServerConnection`, or `ray_serve.AsgiSocket`.
    Both raise `websockets.exceptions.ConnectionClosed` from `send` once the client is gone."""

    async def send(self, message: str) -> None: ...

    def __aiter__(self) -> AsyncIterator[str | bytes]: ...


class Server:
    def __init__(self, config: ServerConfig, runtime: Runtime | None = None, side_runtime: Runtime | None = None):
        """side_runtime: the side-channel model (loaded here when `config.side_channel` asks for it and none is given).
        The base stays loaded beside it, so a session that turns the side channel off runs exactly as without it."""
        self.config = config
        dtype = getattr(torch, config.dtype)
        self.runtime = runtime or load_runtime(config.model, config.device, dtype)
        if side_runtime is None and config.side_channel:
            side_runtime = load_runtime(config.model, config.device, dtype, side_channel=True)
        self.side_runtime = side_runtime
        self.scheduler = Scheduler(config.max_sessions, chunk_seconds=self.runtime.protocol.chunk_seconds)
        self.speaker = Speaker() if config.tts else None
        self.errors = 0  # error events sent, all connections
        self._server = None

    @property
    def port(self) -> int:
        return self._server.sockets[0].getsockname()[1]

    async def start(self) -> "Server":
        await self.scheduler.run(self.warm_up, DRAFT)  # DRAFT: not counted as chunk load
        self._server = await serve(self.handle, self.config.host, self.config.port, process_request=self.http,
                                   max_size=MAX_MESSAGE_BYTES)
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        self.scheduler.close()
        release_heap()

    async def serve_forever(self) -> None:
        await self.start()
        await self._server.serve_forever()

    def warm_up(self) -> None:
        """A throwaway two-unit session per model on the device thread, so first-call costs never land in a client's
        unit."""
        for rt, side_channel in ((self.runtime, None), (self.side_runtime, SIDE_CHANNEL)):
            if rt is None:
                continue
            chunk = np.zeros(rt.protocol.chunk_samples, dtype=np.float32)
            # on the pooled engine the first session will take, so its graphs are captured here
            with borrowed_engine(rt.model, self.config.engine, self.config.max_slots) as engine:
                sess = DuplexSession(rt.model, rt.protocol, live_decoder("sl"), engine=engine, side_channel=side_channel)
                for _ in range(2):
                    sess.prepare(0.2)
                    sess.step(chunk)
                sess.flush()
        settle_heap()  # the model and the warm-up's leftovers are never walked by a collection in a client's unit

    def session_runtime(self, opts: SessionStart) -> tuple[SessionStart, Runtime]:
        """`opts` with `side_channel` resolved (unset: on iff this server has it), and the runtime they run on."""
        side_channel = self.side_runtime is not None if opts.side_channel is None else opts.side_channel
        if side_channel and self.side_runtime is None:
            raise ProtocolError(BAD_OPTION, "side_channel: this server runs without the transcription side channel "
                                            "(start it with `ticktock serve --side-channel`)")
        return replace(opts, side_channel=side_channel), self.side_runtime if side_channel else self.runtime

    # ------------------------------------------------------------ HTTP
    def http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None  # go on with the WebSocket handshake
        return _respond(connection, *self.get(request.path.split("?", 1)[0]))

    def get(self, path: str) -> tuple[int, str, str]:
        """(status, body, content type) of an HTTP GET: `/health`, or a file of `static/` (`/` is the page)."""
        if path == "/health":
            return 200, json.dumps(self.health()), "application/json"
        name = "index.html" if path in ("/", "/index.html") else path.removeprefix("/static/")
        file = (STATIC / name).resolve()
        if file.parent != STATIC or not file.is_file():
            return 404, f"not found: {quote(path)}\n", "text/plain"
        return 200, file.read_text(encoding="utf-8"), mimetypes.guess_type(file.name)[0] or "application/octet-stream"

    def health(self) -> dict:
        return {"status": "ok", "model": self.runtime.name, "sessions": len(self.scheduler.sessions),
                "max_sessions": self.scheduler.max_sessions, "errors": self.errors,
                "device": self.scheduler.stats.to_dict(), "engine": self.config.engine,
                # what the page may offer: every registered decoder, the longest system prompt accepted
                "decoders": list(DECODERS), "max_system_chars": MAX_SYSTEM_CHARS,
                "side_channel": self.side_runtime is not None,
                **({"replica": self.config.replica} if self.config.replica else {})}

    # ------------------------------------------------------------ WebSocket
    async def handle(self, ws: Socket) -> None:
        conn = _Connection(self, ws)
        reader = asyncio.create_task(conn.read())
        try:
            while (raw := await conn.inbox.get()) is not None:
                try:
                    await conn.receive(raw)
                finally:
                    conn.inbox_bytes -= len(raw)
        finally:
            reader.cancel()
            await conn.drop()


class _Connection:
    """One client: at most one live session at a time; protocol errors answered, never raised."""

    def __init__(self, server: Server, ws: Socket):
        self.server, self.ws = server, ws
        self.live: LiveSession | None = None
        self.closing: asyncio.Task | None = None
        # messages are taken off the socket as they come, so what a client has queued is counted (and capped) here
        self.inbox: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self.inbox_bytes = 0

    async def send(self, ev: dict) -> None:
        if ev.get("type") == "error":
            self.server.errors += 1
        if self.server.config.replica:
            ev = {**ev, "replica": self.server.config.replica}
        try:
            await self.ws.send(json.dumps(ev))
        except ConnectionClosed:
            pass  # the client left; the session log still has everything

    def queued_bytes(self) -> int:
        """Messages received and not yet handled (characters of a text frame) + the session's audio not yet decoded."""
        live = self.live if self.live is not None and not self.live.closed else None
        return self.inbox_bytes + (live.queued_bytes() if live else 0)

    async def read(self) -> None:
        """Socket -> inbox; a message that would take the client past `max_queued_bytes` is dropped (queue_full)."""
        cap = self.server.config.max_queued_bytes
        try:
            async for raw in self.ws:
                queued = self.queued_bytes()
                if queued + len(raw) > cap:
                    msg = (f"this message ({len(raw)} bytes) was dropped: {queued} bytes of yours wait to be "
                           f"handled or decoded and the limit is {cap}; send less at a time")
                    await self.send(error_event(QUEUE_FULL, msg, self.live.id if self.live else None))
                    continue
                self.inbox_bytes += len(raw)
                self.inbox.put_nowait(raw)
        except ConnectionClosed:
            pass
        finally:
            self.inbox.put_nowait(None)  # the client is gone: handle what came, then drop the session

    async def receive(self, raw: str | bytes) -> None:
        try:
            msg = parse_client(raw)
            if isinstance(msg, SessionStart):
                await self.start(msg)
            elif isinstance(msg, AudioAppend):
                self.active("audio.append").append(msg)
            elif isinstance(msg, ToolResult):
                self.active("tool.result").tool_result(msg)
            elif isinstance(msg, SessionStop):
                self.stop()
        except ProtocolError as err:
            await self.send(error_event(err.code, str(err), self.live.id if self.live else None))
        except Exception as err:  # a bug must cost one message, not the connection
            log.exception("while handling a client message")
            # no exception text for the client: it may hold server paths or internals; the server log has it
            await self.send(error_event(INTERNAL, f"the server failed on this message ({type(err).__name__}); "
                                                  "it is in the server's log", self.live.id if self.live else None))

    def active(self, what: str) -> LiveSession:
        self._forget_closed()
        if self.live is None:
            raise ProtocolError(NO_SESSION, f"{what} before session.start: start a session first")
        if self.live.stopping:
            raise ProtocolError(NO_SESSION, f"{what} after session.stop: session {self.live.id} is closing")
        return self.live

    def _forget_closed(self) -> None:
        if self.live is not None and self.live.closed:  # it ended by itself (error, full context)
            self.live = None

    async def start(self, msg: SessionStart) -> None:
        self._forget_closed()
        if self.live is not None:
            state = "is closing" if self.live.stopping else "is running"
            raise ProtocolError(SESSION_ACTIVE, f"session {self.live.id} {state} on this connection: "
                                                "one session at a time (session.stop it first)")
        cfg = self.server.config
        opts, runtime = self.server.session_runtime(msg)
        live = LiveSession(opts, runtime, self.server.scheduler, self.send, cfg.log_dir,
                           self.server.speaker, cfg.max_slots, cfg.idle_timeout, cfg.engine)
        try:
            self.server.scheduler.admit(live.id)
        except ServerBusy as err:
            raise ProtocolError(SERVER_BUSY, str(err)) from None
        try:
            started = await live.open()
        except BaseException:
            self.server.scheduler.release(live.id)
            raise
        self.live = live
        await self.send(started)

    def stop(self) -> None:
        live = self.active("session.stop")
        task = live.stop()
        self.closing = asyncio.create_task(self._forget(live, task))

    async def _forget(self, live: LiveSession, task: asyncio.Task) -> None:
        await asyncio.shield(task)
        if self.live is live:
            self.live = None

    async def drop(self) -> None:
        """The connection ended (cleanly or not): the session finishes the unit in flight, logs, and frees its slot."""
        if self.live is not None and not self.live.closed:
            await self.live.abort()
            self.live = None


def _respond(connection: ServerConnection, status: int, body: str, kind: str) -> Response:
    resp = connection.respond(status, body)
    del resp.headers["Content-Type"]
    resp.headers["Content-Type"] = kind if "charset" in kind or not kind.startswith("text") else f"{kind}; charset=utf-8"
    resp.headers["Cache-Control"] = "no-store"
    return resp
