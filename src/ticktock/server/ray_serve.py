"""The WebSocket server as a Ray Serve deployment: session-affine replicas, each a whole `Server` (docs/scaling.md).

    ticktock serve --ray --replicas 2 --max-sessions 4        # or, from a Serve config:
    serve run ticktock.server.ray_serve:build replicas=2 max_sessions=4

A replica holds its own model, device queue and `max_sessions`; Ray's proxy
routes each WebSocket connection to one replica and relays its frames there for
the connection's whole life, and a session lives on one connection, so a session
never moves (every event carries the replica's id as `replica`). Admission is
two-level: Ray routes a new connection to the replica with fewer open ones
(power of two choices) and never gives a replica more than `max_connections`;
the replica answers a `session.start` past its `max_sessions` with the
protocol's `server_busy`. A replica that dies takes its connections with it:
their clients see the socket close without `session.closed`; Serve starts a
replacement, and the other replicas' sessions never notice.
"""

# no `from __future__ import annotations`: FastAPI reads the route methods' annotations (WebSocket) at run time
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, AsyncIterator

import torch
from fastapi import FastAPI, Response, WebSocket
from ray import serve
from ray.serve import Application
from starlette.websockets import WebSocketDisconnect, WebSocketState
from websockets.exceptions import ConnectionClosed

from .app import Server, ServerConfig

APP_NAME = "ticktock"
ROUTE_PREFIX = "/"
api = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)  # the same surface as `ticktock serve`


class AsgiSocket:
    """A Starlette WebSocket as `Server.handle` reads one: text frames in by iteration, `send` raising
    `ConnectionClosed` once the client is gone (as a websockets connection does)."""

    def __init__(self, ws: WebSocket):
        self.ws = ws

    async def send(self, message: str) -> None:
        try:
            await self.ws.send_text(message)
        except (WebSocketDisconnect, RuntimeError):  # RuntimeError: a send after the close
            raise ConnectionClosed(None, None) from None

    def __aiter__(self) -> AsyncIterator[str | bytes]:
        return self._frames()

    async def _frames(self) -> AsyncIterator[str | bytes]:
        while True:
            msg = await self.ws.receive()
            if msg["type"] == "websocket.disconnect":
                return
            yield msg["text"] if msg.get("text") is not None else msg.get("bytes") or b""


@serve.deployment
@serve.ingress(api)
class TicktockReplica:
    def __init__(self, config: dict[str, Any], threads: int | None = None):
        if threads:
            torch.set_num_threads(threads)
        replica = serve.get_replica_context().replica_id.unique_id
        self.server = Server(replace(ServerConfig(**config), replica=replica))
        with torch.no_grad():  # first-call costs here, before Ray routes a client to this replica
            self.server.warm_up()

    @api.websocket("/{path:path}")
    async def session(self, websocket: WebSocket, path: str) -> None:  # any path, as `ticktock serve` accepts
        await websocket.accept()
        try:
            await self.server.handle(AsgiSocket(websocket))
        finally:
            if websocket.client_state == WebSocketState.CONNECTED:
                await websocket.close()

    @api.get("/{path:path}")
    def page(self, path: str) -> Response:
        status, body, kind = self.server.get("/" + path)
        return Response(body, status, media_type=kind, headers={"Cache-Control": "no-store"})


def deployment(config: ServerConfig, replicas: int = 2, threads: int | None = None, cpus: float = 1.0,
               gpus: float = 0.0, max_connections: int | None = None) -> Application:
    """`replicas` replicas of the server, each with `cpus` and `gpus` of Ray's resources (gpus=0.5: two replicas
    per GPU) and `threads` torch threads (None: torch's choice, which Ray sets to the replica's CPUs).
    max_connections: open WebSockets Ray lets one replica hold (default 2 × max_sessions, so clients between
    sessions or being refused do not block admitted ones)."""
    if config.log_dir:  # replicas are separate processes: the log folder must not depend on their working directory
        config = replace(config, log_dir=str(Path(config.log_dir).resolve()))
    return TicktockReplica.options(
        num_replicas=replicas, max_ongoing_requests=max_connections or 2 * config.max_sessions,
        ray_actor_options={"num_cpus": cpus, "num_gpus": gpus},
    ).bind(asdict(config), threads)


def build(args: dict[str, str]) -> Application:
    """The application builder of `serve run ticktock.server.ray_serve:build key=value ...`: keys are
    `replicas`, `threads`, `cpus`, `gpus`, `max_connections` and the `ServerConfig` fields but host and port
    (the proxy's: Serve's `http_options`)."""
    fields = {k: f for k, f in ServerConfig.__dataclass_fields__.items() if k not in ("host", "port", "replica")}
    unknown = set(args) - set(fields) - {"replicas", "threads", "cpus", "gpus", "max_connections"}
    if unknown:
        raise ValueError(f"unknown argument(s) {', '.join(sorted(unknown))}; known: replicas, threads, cpus, gpus, "
                         f"max_connections, {', '.join(fields)}")

    def typed(key: str, value: str) -> Any:
        kind = {"replicas": int, "threads": int, "cpus": float, "gpus": float, "max_connections": int}.get(key)
        kind = kind or {"int": int, "float": float, "bool": lambda v: v.lower() in ("1", "true", "yes")}.get(
            str(fields[key].type), str)
        return kind(value)

    a = {k: typed(k, v) for k, v in args.items()}
    cfg = ServerConfig(**{k: v for k, v in a.items() if k in fields})
    return deployment(cfg, a.get("replicas", 2), a.get("threads"), a.get("cpus", 1.0), a.get("gpus", 0.0),
                      a.get("max_connections"))


def run(app: Application, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Deploy `app` on the Ray cluster this process is connected to, its proxy on host:port; returns when every
    replica is up (warmed up)."""
    serve.start(http_options={"host": host, "port": port})
    serve.run(app, name=APP_NAME, route_prefix=ROUTE_PREFIX)


def wait_running(replicas: int, timeout: float = 180.0) -> None:
    """Return once `replicas` replicas run (after a kill Serve starts a replacement, which loads and warms up)."""
    t0 = time.monotonic()
    while True:
        app = serve.status().applications.get(APP_NAME)
        states = app.deployments[TicktockReplica.name].replica_states if app else {}
        if states.get("RUNNING", 0) == replicas == sum(states.values()):
            return
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{APP_NAME}: replicas {dict(states)} after {timeout:.0f} s, wanted {replicas} running")
        time.sleep(0.5)


def replica_actor_names() -> dict[str, str]:
    """{replica id: its Ray actor's name} of the running deployment (for `ray.kill`: a replica dying mid-session)."""
    import ray

    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
    return {n.rsplit("#", 1)[-1]: n for n in names if n.startswith(f"SERVE_REPLICA::{APP_NAME}#")}


def kill_replica(replica: str) -> None:
    """End one replica's process at once, as a crash would (Serve then starts a replacement)."""
    import ray

    ray.kill(ray.get_actor(replica_actor_names()[replica], namespace="serve"), no_restart=True)
