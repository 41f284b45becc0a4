"""Load test on loopback: N clients stream held-out sessions in real time to a `ticktock serve` subprocess.

For each decoder in turn (default `ar` then `sl`), N clients each stream `seconds`
of held-out audio (sessions of the `heldout` suite back to back, a different
starting session per client) in 100 ms frames at the audio's own pace, client i
starting i/N s after client 0 so chunk arrivals spread over the second as real
talkers' do. Checks: zero error events, every client got `seconds` units, every
unit of every session is in its log. Reports per-unit post-audio work, latency
ℓ_t and lag b_t (p50/p99) per decoder; bounded (it stops by itself), last stdout
line one JSON object.

    python scripts/load_test.py                      # 8 clients x 60 s, ar and sl
    python scripts/load_test.py --clients 2 --seconds 10 --json
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
from .client import stream_audio
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


def start_server(port: int, args: argparse.Namespace, log_dir: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "ticktock.cli", "serve", "--port", str(port), "--max-sessions", str(args.clients),
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


async def run_clients(url: str, signals: list[np.ndarray], decoder: str, timeout: float) -> list[list[dict]]:
    async def one(i: int, x: np.ndarray) -> list[dict]:
        await asyncio.sleep(i / len(signals))
        return await stream_audio(url, x, realtime=True, decoder=decoder, timeout=timeout)

    return await asyncio.gather(*(one(i, x) for i, x in enumerate(signals)))


def check_run(runs: list[list[dict]], expected_units: int, log_dir: Path) -> dict:
    """Errors, completeness of events and logs, and the per-unit figures of one decoder's run."""
    units, errors, logged_ok, closed_ok = [], [], 0, 0
    for events in runs:
        errors += [e for e in events if e["type"] == "error"]
        mine = [e for e in events if e["type"] == "unit"]
        units += mine
        closed = next((e for e in events if e["type"] == "session.closed"), None)
        if closed and closed["units"] == expected_units == len(mine):
            closed_ok += 1
        log = log_dir / closed["log_path"] if closed else None  # the server sends the name inside its --log-dir
        if log is not None and log.exists():
            logged = [r["index"] for r in read_log(log) if r["type"] == "unit"]
            logged_ok += logged == list(range(expected_units))
    return {"sessions": len(runs), "sessions_complete": closed_ok, "sessions_fully_logged": logged_ok,
            "units": len(units), "errors": len(errors), "error_codes": sorted({e["code"] for e in errors}),
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
                  pair(r["lag_ms"]), f"{r['device_utilization']:.0%}")
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
    args = p.parse_args(argv)
    console = Console(stderr=True)
    if not console.is_terminal:
        console.width = 150  # the table stays readable in logs
    out = Path(args.out or f"runs/loadtest/{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    signals = heldout_audio(args.seconds, args.clients)
    port = free_port()
    proc = start_server(port, args, out)
    results: dict[str, dict] = {}
    try:
        for decoder in args.decoders.split(","):
            console.print(f"[bold]{decoder}[/]: {args.clients} clients × {args.seconds:.0f} s in real time …")
            before = health(port)["device"]
            t0 = time.monotonic()
            runs = asyncio.run(run_clients(f"ws://127.0.0.1:{port}", signals, decoder, timeout=args.seconds + 120))
            wall = time.monotonic() - t0
            after = health(port)["device"]
            results[decoder] = check_run(runs, int(round(args.seconds)), out)
            results[decoder]["device_utilization"] = round((after["busy_s"] - before["busy_s"]) / wall, 3)
            results[decoder]["wall_s"] = round(wall, 1)
        server = health(port)
    finally:
        proc.terminate()
        proc.wait(30)
    summary = {"clients": args.clients, "seconds": args.seconds, "threads": args.threads, "tts": args.tts,
               "server_errors": server["errors"], "server_alive_to_the_end": server is not None,
               "all_units_logged": all(r["sessions_fully_logged"] == r["sessions"] for r in results.values()),
               "decoders": results, "logs": str(out)}
    (out / "results.json").write_text(json.dumps({**summary, "config": vars(args)}, indent=1))
    console.print(table(results, f"load test · {args.clients} clients × {args.seconds:.0f} s · loopback · CPU"))
    console.print(f"server errors: {summary['server_errors']} · every unit logged: {summary['all_units_logged']} · "
                  f"logs and results.json in {out}")
    if args.json:
        print(json.dumps(summary))
    ok = summary["server_errors"] == 0 and summary["all_units_logged"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
