"""`ticktock demo`: run a session on the shipped model and print its chunk timeline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..audio import load_audio, split_chunks
from ..runtime import load_runtime
from ..session import DuplexSession, make_clock
from .engine_options import add_engine_options, torch_dtype

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "examples"


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="run a session on the shipped model and print its timeline")
    p.add_argument("--example", default=None, help=f"a shipped example session ({', '.join(sorted(x.stem for x in EXAMPLES.glob('*.wav'))) or 'none'})")
    p.add_argument("--wav", default=None, help="your own wav file instead of an example")
    p.add_argument("--model", default=None, help="model directory (default: the shipped ticktock-tiny)")
    p.add_argument("--decoder", default="sl")
    p.add_argument("--clock", default="wall", choices=["wall", "cost"])
    p.add_argument("--calibration", default=None, help="profile for --clock cost")
    p.add_argument("--device", default="cpu")
    add_engine_options(p)
    p.add_argument("--json", action="store_true", help="last line: the units as JSON")
    p.set_defaults(func=run)


def _tool_executor():
    """Runs the mock tools on calls the model makes; results come back as input in the next unit."""
    try:
        from ..scenarios.world import run_tool as run_tool_call
    except ImportError:
        return lambda call: None
    return run_tool_call


def run(args: argparse.Namespace) -> int:
    console = Console()
    rt = load_runtime(args.model, args.device, torch_dtype(args.dtype))
    if not rt.trained:
        console.print("[bold yellow]No trained model is shipped: running a RANDOM-INIT ticktock-tiny; its output is noise.[/]")
    if args.wav:
        wavs = [Path(args.wav)]
    else:
        names = sorted(EXAMPLES.glob("*.wav"))
        if not names:
            console.print("[red]no shipped example sessions; pass --wav FILE[/]")
            return 2
        wavs = [EXAMPLES / f"{args.example}.wav"] if args.example else names
        if not wavs[0].exists():
            console.print(f"[red]unknown example {args.example!r}; known: {', '.join(n.stem for n in names)}[/]")
            return 2
    out = {wav.stem: run_one(console, rt, wav, args) for wav in wavs}
    if args.json:
        print(json.dumps(out))
    return 0


def run_one(console: Console, rt, wav: Path, args: argparse.Namespace) -> list[dict]:
    meta_file = wav.with_suffix(".json")
    meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
    chunks = split_chunks(load_audio(wav))
    clock = make_clock(args.clock, args.calibration, str(rt.model.device))
    kw = {"system": meta["system"]} if meta.get("system") else {}
    sess = DuplexSession(rt.model, rt.protocol, args.decoder, clock=clock, engine=args.engine, **kw)
    execute = _tool_executor()
    if meta.get("user"):
        console.print(f"[bold]{wav.name}[/] — the user says: " + " / ".join(f"“{u}”" for u in meta["user"]))
    table = Table(title=f"{wav.name} · {rt.name} · decoder {args.decoder} · {clock.name} clock")
    for col in ("unit", "decision", "output", "ℓ_t ms", "lag ms", "fwd"):
        table.add_column(col, justify="right" if col in ("unit", "ℓ_t ms", "lag ms", "fwd") else "left")
    results, pending_result = [], None
    for chunk in chunks:
        r = sess.step(chunk, pending_result)
        pending_result = execute(r.tool_call) if r.tool_call else None
        results.append(r)
        text = r.tool_call or r.text or ""
        if pending_result:
            text += f"  → {pending_result}"
        table.add_row(str(r.index), r.decision or "?", text, f"{r.latency * 1000:.0f}", f"{r.lag * 1000:.0f}", str(r.forwards))
    console.print(table)
    return [r.to_dict() for r in results]
