"""`ticktock bench`: replay a suite through every decoder and compare latency against AR (DESIGN §7, §10)."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys

from rich.console import Console
from rich.table import Table

DEFAULT_DECODERS = "ar,pld,tr,lookahead,sl"


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="decoder latency on a suite: speedup over AR, #MAT, deadline misses, lag")
    p.add_argument("--suite", default="quick", choices=["quick", "full", "heldout", "long"])
    p.add_argument("--n", "--sessions", dest="n", type=int, default=None, help="only the first N sessions")
    p.add_argument("--decoders", default=DEFAULT_DECODERS,
                   help=f"comma-separated decoder names (default {DEFAULT_DECODERS}; 'ar' is always added)")
    p.add_argument("--clock", default="cost", choices=["cost", "wall"])
    p.add_argument("--calibration", default=None, help="cost-model profile (default: the H200 7B one if shipped)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0, help="sampling seed base (session k uses seed + k)")
    p.add_argument("--model", default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", default=None, help="results folder (default runs/bench-<suite>-<clock>)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _cell(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"
    return str(x)


def run(args: argparse.Namespace) -> int:
    import torch
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..bench.metrics import json_view, summarize
    from ..bench.replay import ordered_decoders, replay, suite_sessions
    from ..bench.report import write_results
    from ..decoding.registry import DECODERS
    from ..runtime import load_runtime
    from ..session import make_clock

    console = Console(stderr=True)
    decoders = ordered_decoders(args.decoders.split(","))
    unknown = [d for d in decoders if d not in DECODERS]
    if unknown:
        console.print(f"[red]unknown decoder(s) {', '.join(unknown)}; known: {', '.join(sorted(DECODERS))}")
        return 2
    profile = None
    if args.clock == "cost":
        from ..bench.profiles import default_profile, find_profile
        profile = str(find_profile(args.calibration) if args.calibration else default_profile())
    clock = make_clock(args.clock, profile, args.device)

    torch.set_grad_enabled(False)
    rt = load_runtime(args.model, args.device)
    if not rt.trained:
        console.print(f"[yellow]note: {rt.name}; latencies are meaningful, decisions are not")
    n_sessions, sessions = suite_sessions(args.suite, args.n, int(round(rt.protocol.chunk_seconds * 16000)))

    with Progress(TextColumn("bench {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as bar:
        task = bar.add_task(f"{args.suite} · {','.join(decoders)}", total=n_sessions)
        records = replay(rt.model, rt.protocol, sessions, decoders, clock, temperature=args.temperature,
                         seed=args.seed, progress=lambda s: bar.advance(task))

    chunk_ms = rt.protocol.chunk_seconds * 1000
    summary = summarize(records, greedy=args.temperature <= 0, chunk_ms=chunk_ms)
    out = args.out or f"runs/bench-{args.suite}-{args.clock}"
    config = {"args": {k: v for k, v in vars(args).items() if k != "func"}, "decoders": decoders, "model": rt.name,
              "trained": rt.trained, "profile": profile, "clock": args.clock, "suite": args.suite,
              "temperature": args.temperature, "chunk_ms": chunk_ms, "sessions": n_sessions,
              "date": _dt.datetime.now().isoformat(timespec="seconds"), "command": " ".join(sys.argv)}
    write_results(out, config, records, summary, plots=not args.no_plots)

    table = Table(title=f"ticktock bench · {args.suite} · {args.clock} clock · {rt.name}")
    cols = [("speak ×", "speak_speedup"), ("tool ×", "tool_speedup"), ("#MAT", "mat"), ("lossless", "lossless"),
            ("speak ℓ ms", "speak_latency_ms"), ("onset ms", "onset_ms"), ("tool ℓ ms", "tool_latency_ms"),
            ("miss", "deadline_miss_rate"), ("lagging", "lagging_sessions"), ("max lag ms", "max_lag_ms_max")]
    table.add_column("decoder")
    for c, _ in cols:
        table.add_column(c, justify="right")
    for d, m in summary.items():
        table.add_row(d, *[_cell(m.get(k)) for _, k in cols])
    console.print(table)
    console.print(f"results: {out}/ (report.md, summary.json, units.jsonl)")
    if args.json:
        print(json.dumps({"suite": args.suite, "clock": args.clock, "decoders": json_view(summary)}))
    return 0
