"""`ticktock serve`: the real-time WebSocket server and the browser page (docs/design.md §8, docs/protocol.md);
with `--ray`, replicas of it behind Ray Serve (docs/scaling.md)."""

from __future__ import annotations

import argparse
import dataclasses
import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .engine_options import add_engine_options

if TYPE_CHECKING:
    from rich.console import Console

    from ..server import ServerConfig


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve live full-duplex sessions over WebSocket, with a browser page")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--max-sessions", type=int, default=4, help="concurrent sessions; more get a server_busy error")
    p.add_argument("--log-dir", default="runs/sessions", help="one JSONL log per session")
    p.add_argument("--model", default=None, help="model directory (default: the shipped ticktock-tiny)")
    p.add_argument("--device", default="cpu")
    add_engine_options(p)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--max-slots", type=int, default=8192, help="KV slots per session (a full one ends with "
                                                                  "context_full unless a kv_policy evicts)")
    p.add_argument("--no-tts", action="store_true", help="do not synthesize audio.delta with espeak-ng")
    p.add_argument("--idle-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="close a session that sends no audio for this long (error idle_timeout); 0: never")
    p.add_argument("--max-queued-bytes", type=int, default=32 * 1024 * 1024, metavar="BYTES",
                   help="per client: messages not yet handled + audio not yet decoded; past it a message is "
                        "dropped with queue_full (default 32 MiB)")
    p.add_argument("--side-channel", action="store_true",
                   help="also load the model's transcription side channel: unit events carry what the user said "
                        "(asr); sessions use it unless they start with side_channel false")
    p.add_argument("--ray", nargs="*", default=None, metavar="KEY=VALUE",
                   help="serve replicas of this server behind Ray Serve's proxy on --host:--port, a session staying "
                        "on its replica (pip install -e '.[ray]'; docs/scaling.md); keys: replicas (2), cpus per "
                        "replica (1), per_gpu: replicas sharing a cuda --device (1), max_connections: WebSockets "
                        "one replica is given (2 × --max-sessions), address: a running cluster (e.g. auto)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import torch
    from rich.console import Console

    from ..server import Server, ServerConfig

    torch.set_grad_enabled(False)
    if args.threads:
        torch.set_num_threads(args.threads)
    console = Console(stderr=True)
    cfg = ServerConfig(host=args.host, port=args.port, max_sessions=args.max_sessions, log_dir=args.log_dir,
                       model=args.model, device=args.device, engine=args.engine, dtype=args.dtype,
                       tts=not args.no_tts,
                       max_slots=args.max_slots, idle_timeout=args.idle_timeout,
                       max_queued_bytes=args.max_queued_bytes, side_channel=args.side_channel)
    if args.ray is not None:
        return run_ray(args, cfg, console)
    server = Server(cfg)
    if not server.runtime.trained:
        console.print("[bold yellow]No trained model is shipped: serving a RANDOM-INIT ticktock-tiny.[/]")
    tts = "espeak-ng" if server.speaker and server.speaker.available else "off"
    console.print(f"ticktock serve · {server.runtime.name} · {cfg.engine} engine · max {cfg.max_sessions} sessions · "
                  f"tts {tts} · side channel {'on' if server.side_runtime else 'off'} · "
                  f"logs in {cfg.log_dir}\n  page:      http://{cfg.host}:{cfg.port}/\n"
                  f"  websocket: ws://{cfg.host}:{cfg.port}/ws", highlight=False)
    try:
        asyncio.run(server.serve_forever())
    except KeyboardInterrupt:
        pass
    return 0


@dataclass(frozen=True)
class RayOptions:
    """`serve --ray KEY=VALUE ...`."""

    replicas: int = 2  # each with its own model and --max-sessions
    cpus: float = 1.0  # Ray CPUs per replica
    per_gpu: int = 1  # replicas sharing one GPU (a cuda --device)
    max_connections: int | None = None  # open WebSockets one replica is given (Ray's default: 2 x --max-sessions)
    address: str | None = None  # a running cluster to join (e.g. auto); none: start a local one

    @classmethod
    def parse(cls, pairs: list[str]) -> "RayOptions":
        """KEY=VALUE strings -> options; ValueError naming what is wrong."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kw: dict = {}
        for pair in pairs:
            key, eq, value = pair.partition("=")
            if not eq or key not in fields:
                raise ValueError(f"--ray takes KEY=VALUE with KEY one of {', '.join(fields)}; got {pair!r}")
            cast = {"replicas": int, "per_gpu": int, "max_connections": int, "cpus": float}.get(key, str)
            try:
                kw[key] = cast(value)
            except ValueError:
                raise ValueError(f"--ray {key}: expected a number, got {value!r}") from None
        opts = cls(**kw)
        if min(opts.replicas, opts.per_gpu, opts.max_connections or 1) < 1 or opts.cpus <= 0:
            raise ValueError("--ray: replicas, per_gpu and max_connections must be at least 1, cpus above 0")
        return opts


def run_ray(args: argparse.Namespace, cfg: ServerConfig, console: Console) -> int:
    import time

    from ..cli import CommandError

    try:
        opts = RayOptions.parse(args.ray)
    except ValueError as err:
        raise CommandError(str(err)) from None
    import ray

    from ..server import ray_serve

    gpus = 1 / opts.per_gpu if args.device.startswith("cuda") else 0.0
    ray.init(address=opts.address, include_dashboard=False, log_to_driver=False,
             num_cpus=None if opts.address else max(1, round(opts.replicas * opts.cpus)))
    console.print(f"ticktock serve --ray · {opts.replicas} replica(s) × max {cfg.max_sessions} sessions · "
                  f"{opts.cpus:g} CPU{f' {gpus:g} GPU' if gpus else ''} each · starting …", highlight=False)
    app = ray_serve.deployment(cfg, opts.replicas, args.threads, opts.cpus, gpus, opts.max_connections)
    try:
        ray_serve.run(app, args.host, args.port)
        console.print(f"  page:      http://{args.host}:{args.port}/\n  websocket: ws://{args.host}:{args.port}/ws\n"
                      "  replica logs: the Ray session's logs/serve/ folder", highlight=False)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:  # on a cluster it joined, only its own application goes
        from ray import serve

        serve.delete(ray_serve.APP_NAME)
    return 0
