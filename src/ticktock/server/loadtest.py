"""Load test on loopback: N clients stream held-out sessions in real time to a `ticktock serve` subprocess.

For each decoder in turn (default `ar` then `sl`), N clients each stream `seconds`
of held-out audio (sessions of the `heldout` suite back to back, a different
starting session per client) in 100 ms frames at the audio's own pace, client i
starting i/N s after client 0 so chunk arrivals spread over the second as real
talkers' do. Checks: zero error events, every client got `seconds` units, every
unit of every session is in its log. Reports per-unit post-audio work, latency
ℓ_t and lag b_t (p50/p99) per decoder; bounded (it stops by itself), last stdout
line one JSON object.

With `--ray N` the server is N Ray Serve replicas (`ticktock.server.ray_serve`) in
a local Ray cluster, each with `--max-sessions`: the run also checks session
affinity (every event of a session from one replica) and counts sessions per
replica. `--kill-replica-at S` kills the replica of client 0 S seconds into each
decoder's run: its sessions must end with a clear error (`connection_lost`), the
other replicas' sessions must finish with no error and no unit lost.

    python scripts/load_test.py                      # 8 clients x 60 s, ar and sl
    python scripts/load_test.py --clients 2 --seconds 10 --json
    python scripts/load_test.py --ray 2 --decoders ar [--kill-replica-at 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from ..audio import SAMPLE_RATE
from .client import CONNECTION_LOST, stream_audio
from .log import read_log
from .report import percentiles


def heldout_audio(seconds: float, clients: int) -> list[np.ndarray]:
    """`clients` signals of `seconds` at 16 kHz: held-out sessions back to back, client i starting at session i·k."""
    from ..scenarios.store import ensure_suite
    from ..scenarios.suites import load_session

    folder, entries = ensure_suite("heldout")
    need = int(round(seconds * SAMPLE_RATE))
    out = []
    for c in range(clients):
        parts, have, i = [], 0, c * 7
        while have < need:
            _, audio = load_session(folder, entries[i % len(entries)])
            parts.append(audio)
            have += len(audio)
            i += 1
        out.append(np.concatenate(parts)[:need].astype(np.float32))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(port: int) -> dict | None:
    try:
        return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).read())
    except OSError:
        return None


class RayServer:
    """`args.ray` Ray Serve replicas in a local Ray cluster started by this process, the proxy on `port`."""

    def __init__(self, port: int, args: argparse.Namespace, log_dir: Path):
        import ray

        from . import ray_serve
        from .app import ServerConfig

        self.replicas = args.ray
        ray.init(num_cpus=args.ray, include_dashboard=False, log_to_driver=False)
        cfg = ServerConfig(max_sessions=args.max_sessions or args.clients, log_dir=str(log_dir), model=args.model,
                           tts=args.tts)
        ray_serve.run(ray_serve.deployment(cfg, args.ray, args.threads), port=port)

    def wait_running(self) -> None:
        from .ray_serve import wait_running

        wait_running(self.replicas)

    def stop(self) -> None:
        import ray
        from ray import serve

        serve.shutdown()
        ray.shutdown()


def start_server(port: int, args: argparse.Namespace, log_dir: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "ticktock.cli", "serve", "--port", str(port),
           "--max-sessions", str(args.max_sessions or args.clients),
           "--log-dir", str(log_dir), "--threads", str(args.threads)]
    cmd += ["--model", args.model] if args.model else []
    cmd += [] if args.tts else ["--no-tts"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(log_dir / "server.log", "w"))
    t0 = time.monotonic()
    while health(port) is None:
        if proc.poll() is not None or time.monotonic() - t0 > 120:
            proc.kill()
            raise RuntimeError(f"the server did not start; see {log_dir / 'server.log'}")
        time.sleep(0.25)
    return proc


async def run_clients(url: str, signals: list[np.ndarray], decoder: str, timeout: float,
                      kill_at: float | None = None) -> tuple[list[list[dict]], str | None]:
    """Every client's events, and the replica killed `kill_at` s in (client 0's; None: no kill)."""
    replica_of_first: asyncio.Future = asyncio.get_running_loop().create_future()

    def first_started(ev: dict) -> None:
        if ev["type"] == "session.started" and not replica_of_first.done():
            replica_of_first.set_result(ev.get("replica"))

    async def one(i: int, x: np.ndarray) -> list[dict]:
        await asyncio.sleep(i / len(signals))
        return await stream_audio(url, x, realtime=True, decoder=decoder, timeout=timeout,
                                  on_event=first_started if i == 0 else None)

    async def kill() -> str | None:
        from .ray_serve import kill_replica

        await asyncio.sleep(kill_at)
        victim = await asyncio.wait_for(replica_of_first, 60)
        await asyncio.to_thread(kill_replica, victim)
        return victim

    clients = asyncio.gather(*(one(i, x) for i, x in enumerate(signals)))
    killed = await kill() if kill_at is not None else None
    return await clients, killed


def check_run(runs: list[list[dict]], expected_units: int, log_dir: Path, killed: str | None = None) -> dict:
    """Errors, completeness of events and logs, and the per-unit figures of one decoder's run. Behind Ray Serve also
    affinity (every event of a session carries one `replica`) and sessions per replica; the sessions of the
    `killed` replica are counted apart: each must end with `connection_lost`, and the others must be untouched."""
    units, errors, logged_ok, closed_ok, lost = [], [], 0, 0, 0
    replicas: dict[str | None, int] = {}  # None: a session whose events name no replica, or several
    affine, on_killed, killed_clear, killed_units, killed_logged, behind_ray = 0, 0, 0, 0, 0, False
    for events in runs:
        ids = {e["replica"] for e in events if "replica" in e}
        behind_ray |= bool(ids)
        affine += len(ids) == 1
        replica = ids.pop() if len(ids) == 1 else None
        replicas[replica] = replicas.get(replica, 0) + 1
        if killed is not None and replica == killed:
            on_killed += 1
            killed_clear += events[-1]["type"] == "error" and events[-1]["code"] == CONNECTION_LOST
            got = [e["index"] for e in events if e["type"] == "unit"]
            killed_units += len(got)
            log = log_dir / events[0].get("log_path", "-")  # a unit is logged before it is sent: all are there
            logged = {r["index"] for r in read_log(log) if r["type"] == "unit"} if log.is_file() else set()
            killed_logged += sum(i in logged for i in got)
            continue
        errors += [e for e in events if e["type"] == "error"]
        lost += max(0, expected_units - sum(e["type"] == "unit" for e in events))
        mine = [e for e in events if e["type"] == "unit"]
        units += mine
        closed = next((e for e in events if e["type"] == "session.closed"), None)
        if closed and closed["units"] == expected_units == len(mine):
            closed_ok += 1
        log = log_dir / closed["log_path"] if closed else None  # the server sends the name inside its --log-dir
        if log is not None and log.exists():
            logged = [r["index"] for r in read_log(log) if r["type"] == "unit"]
            logged_ok += logged == list(range(expected_units))
    ray = {} if not behind_ray else {
        "sessions_per_replica": replicas, "affinity_held": affine == len(runs),
        **({"killed_replica": killed, "killed_sessions": on_killed, "killed_sessions_clear_error": killed_clear,
            "killed_sessions_units": killed_units, "killed_sessions_units_logged": killed_logged} if killed else {})}
    return {"sessions": len(runs) - on_killed, "sessions_complete": closed_ok, "sessions_fully_logged": logged_ok,
            "units": len(units), "lost_units": lost, **ray,
            "errors": len(errors), "error_codes": sorted({e["code"] for e in errors}),
            "misses": sum(u["miss"] for u in units),
            "post_audio_ms": percentiles([u["post_audio_ms"] for u in units]),
            "latency_ms": percentiles([u["latency_ms"] for u in units]),
            "lag_ms": percentiles([u["lag_ms"] for u in units]),
            "max_lag_ms": max((u["lag_ms"] for u in units), default=None),
            "speak_units": sum(u["decision"] == "speak" for u in units),
            "accepted_tokens": sum(u["accepted"] for u in units)}


def table(results: dict[str, dict], title: str) -> Table:
    t = Table(title=title)
    for col in ("decoder", "sessions ok", "logged", "units", "errors", "misses", "post-audio p50/p99 ms",
                "ℓ_t p50/p99 ms", "lag p50/p99 ms", "device util"):
        t.add_column(col, justify="left" if col == "decoder" else "right")
    for name, r in results.items():
        pair = lambda d: f"{d['p50']} / {d['p99']}"  # noqa: E731
        t.add_row(name, f"{r['sessions_complete']}/{r['sessions']}", f"{r['sessions_fully_logged']}/{r['sessions']}",
                  str(r["units"]), str(r["errors"]), str(r["misses"]), pair(r["post_audio_ms"]), pair(r["latency_ms"]),
                  pair(r["lag_ms"]), "—" if r["device_utilization"] is None else f"{r['device_utilization']:.0%}")
    return t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--decoders", default="ar,sl")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the server")
    p.add_argument("--model", default=None)
    p.add_argument("--tts", action="store_true", help="also synthesize audio.delta (off: the model's latency alone)")
    p.add_argument("--out", default=None, help="session logs and results (default runs/loadtest/<time>)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--max-sessions", type=int, default=None, help="of the server, per replica (default: --clients)")
    p.add_argument("--ray", type=int, default=0, metavar="N", help="serve with N Ray Serve replicas (ray_serve.py)")
    p.add_argument("--kill-replica-at", type=float, default=None, metavar="S",
                   help="with --ray: kill client 0's replica S s into each decoder's run")
    args = p.parse_args(argv)
    if args.kill_replica_at is not None and not args.ray:
        p.error("--kill-replica-at needs --ray N")
    console = Console(stderr=True)
    if not console.is_terminal:
        console.width = 150  # the table stays readable in logs
    out = Path(args.out or f"runs/loadtest/{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    signals = heldout_audio(args.seconds, args.clients)
    port = free_port()
    server = RayServer(port, args, out.resolve()) if args.ray else start_server(port, args, out)
    results: dict[str, dict] = {}
    try:
        for decoder in args.decoders.split(","):
            console.print(f"[bold]{decoder}[/]: {args.clients} clients × {args.seconds:.0f} s in real time …")
            if args.ray:  # a replica killed in the last run has been replaced
                server.wait_running()
            before = None if args.ray else health(port)["device"]  # behind Ray, /health is one replica's
            t0 = time.monotonic()
            runs, killed = asyncio.run(run_clients(f"ws://127.0.0.1:{port}", signals, decoder,
                                                   timeout=args.seconds + 120, kill_at=args.kill_replica_at))
            wall = time.monotonic() - t0
            results[decoder] = check_run(runs, int(round(args.seconds)), out, killed)
            results[decoder]["device_utilization"] = (
                None if before is None else round((health(port)["device"]["busy_s"] - before["busy_s"]) / wall, 3))
            results[decoder]["wall_s"] = round(wall, 1)
        status = health(port)
    finally:
        if args.ray:
            server.stop()
        else:
            server.terminate()
            server.wait(30)
    server_errors = sum(r["errors"] for r in results.values()) if args.ray else status["errors"]
    summary = {"clients": args.clients, "seconds": args.seconds, "threads": args.threads, "tts": args.tts,
               "ray_replicas": args.ray, "server_errors": server_errors, "server_alive_to_the_end": status is not None,
               "all_units_logged": all(r["sessions_fully_logged"] == r["sessions"] for r in results.values()),
               "lost_units": sum(r["lost_units"] for r in results.values()), "decoders": results, "logs": str(out)}
    (out / "results.json").write_text(json.dumps({**summary, "config": vars(args)}, indent=1))
    console.print(table(results, f"load test · {args.clients} clients × {args.seconds:.0f} s · loopback · CPU"))
    console.print(f"server errors: {summary['server_errors']} · lost units: {summary['lost_units']} · "
                  f"every unit logged: {summary['all_units_logged']} · logs and results.json in {out}")
    for name, r in results.items():
        if "affinity_held" in r:
            console.print(f"{name}: sessions per replica {r['sessions_per_replica']} · affinity held: "
                          f"{r['affinity_held']}" + (f" · killed {r['killed_replica']}: {r['killed_sessions']} "
                                                     f"session(s), {r['killed_sessions_clear_error']} ended with "
                                                     f"{CONNECTION_LOST} after {r['killed_sessions_units']} units "
                                                     f"({r['killed_sessions_units_logged']} in their logs)"
                                                     if "killed_replica" in r else ""))
    if args.json:
        print(json.dumps(summary))
    ok = summary["server_errors"] == 0 and summary["all_units_logged"] and summary["lost_units"] == 0
    for r in results.values():  # behind Ray: affinity, and the killed replica's sessions ended clearly, logs whole
        ok = ok and r.get("affinity_held", True) and r.get("killed_sessions_clear_error") == r.get("killed_sessions")
        ok = ok and r.get("killed_sessions_units_logged") == r.get("killed_sessions_units")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
