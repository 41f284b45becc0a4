"""`ticktock bench`: replay a suite through every decoder and compare latency against AR (DESIGN §7, §10)."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys

from rich.console import Console
from rich.table import Table

from .cells import cell as _cell
from .engine_options import add_engine_options, torch_dtype

DEFAULT_DECODERS = "ar,pld,tr,lookahead,sl"


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="decoder latency on a suite: speedup over AR, #MAT, deadline misses, lag")
    p.add_argument("--suite", default="quick", choices=["quick", "full", "heldout", "long", "pairs"])
    p.add_argument("--n", type=int, default=None, help="only the first N sessions of the suite")
    p.add_argument("--sample", type=int, default=None, metavar="N",
                   help="a stratified sample of N sessions covering every family (seeded by --seed; ids in config.json)")
    p.add_argument("--part", default=None, metavar="K/M",
                   help="only the K-th of M slices of the sessions (a long run in resumable pieces; "
                        "merge the parts with scripts/merge_bench.py)")
    p.add_argument("--sessions", default="1",
                   help="sessions sharing one device at a time; a list (1,2,4) also sweeps it (Fig. 4c)")
    p.add_argument("--decoders", default=DEFAULT_DECODERS,
                   help=f"comma-separated decoder names (default {DEFAULT_DECODERS}; 'ar' is always added)")
    p.add_argument("--clock", default="cost", choices=["cost", "wall"])
    p.add_argument("--calibration", default=None, help="cost-model profile (default: the H200 7B one if shipped)")
    p.add_argument("--temperature", default="0",
                   help="sampling temperature; a list (0,0.5,1) also sweeps it (Fig. 4b); the first value is the main run")
    p.add_argument("--seed", type=int, default=0, help="sampling seed base (session k uses seed + k)")
    p.add_argument("--model", default=None)
    p.add_argument("--device", default="cpu")
    add_engine_options(p)
    p.add_argument("--side-channel", default="off", choices=["off", "after_decision", "after_content"],
                   help="transcription segments in every session (a model trained for them: train side-channel)")
    p.add_argument("--asr-share", type=float, default=0.25,
                   help="with a side channel: the share of a chunk its transcript segment may take (the idle "
                        "window's rest goes to drafting; docs/side-channel.md)")
    p.add_argument("--workers", type=int, default=1,
                   help="replay processes, each with one torch thread (for the cost clock; a wall clock "
                        "would also time their contention)")
    p.add_argument("--out", default=None, help="results folder (default runs/bench-<suite>-<clock>)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _floats(text: str, what: str, cast=float) -> list:
    try:
        vals = [cast(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"--{what}: expected a comma-separated list of numbers, got {text!r}")
    if not vals:
        raise SystemExit(f"--{what}: no value given")
    return vals


def run(args: argparse.Namespace) -> int:
    import torch
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..bench.metrics import json_view, summarize
    from ..bench.parallel import ReplayJob, parallel_replay
    from ..bench.profiles import profile_for_clock, scheduled_protocol
    from ..bench.replay import ordered_decoders, replay, sessions_from_entries
    from ..bench.report import write_results
    from ..bench.sample import part_of, stratified_sample
    from ..decoding.registry import DECODERS
    from ..runtime import load_runtime
    from ..scenarios.store import ensure_suite
    from ..session import make_clock

    console = Console(stderr=True)
    decoders = ordered_decoders(args.decoders.split(","))
    unknown = [d for d in decoders if d not in DECODERS]
    if unknown:
        console.print(f"[red]unknown decoder(s) {', '.join(unknown)}; known: {', '.join(sorted(DECODERS))}")
        return 2
    temps = _floats(args.temperature, "temperature")
    counts = _floats(args.sessions, "sessions", int)
    if min(counts) < 1 or min(temps) < 0:
        console.print("[red]--sessions must be >= 1 and --temperature >= 0")
        return 2
    if args.workers > 1 and args.clock != "cost":
        console.print("[yellow]note: a wall clock with several workers also times their contention; "
                      "keep workers well under the number of cores")
    profile = profile_for_clock(args.clock, args.calibration)
    clock = make_clock(args.clock, profile, args.device)

    torch.set_grad_enabled(False)
    rt = load_runtime(args.model, args.device, torch_dtype(args.dtype), side_channel=args.side_channel != "off")
    if not rt.trained:
        console.print(f"[yellow]note: {rt.name}; latencies are meaningful, decisions are not")
    folder, entries = ensure_suite(args.suite)
    entries = entries[: args.n] if args.n else entries
    if args.sample:
        entries = stratified_sample(entries, args.sample, args.seed)
    if args.part:
        try:
            entries = part_of(entries, args.part)
        except ValueError as err:
            console.print(f"[red]{err}")
            return 2
    chunk = int(round(rt.protocol.chunk_seconds * 16000))
    chunk_ms = rt.protocol.chunk_seconds * 1000
    side_channel = None if args.side_channel == "off" else args.side_channel
    if side_channel:
        rt.protocol = scheduled_protocol(rt.protocol, args.clock, profile, args.device, args.asr_share)
    # the main run, then the sweeps' other points: temperature at the first N, N at the first temperature
    settings = [(temps[0], counts[0])] + [(t, counts[0]) for t in temps[1:]] + [(temps[0], n) for n in counts[1:]]

    def records_for(temperature: float, concurrent: int, bar: Progress) -> list[dict]:
        task = bar.add_task(f"{args.suite} · T={temperature:g} · N={concurrent} · {','.join(decoders)}",
                            total=len(entries))
        if args.workers > 1:
            job = ReplayJob(args.model, args.device, args.clock, profile, tuple(decoders), temperature, args.seed,
                            concurrent, side_channel, rt.protocol.max_asr_tokens, args.engine, args.dtype)
            return parallel_replay(job, folder, entries, args.workers, progress=lambda k: bar.advance(task, k))
        return replay(rt.model, rt.protocol, sessions_from_entries(folder, entries, chunk), decoders, clock,
                      temperature=temperature, seed=args.seed, concurrent=concurrent, side_channel=side_channel,
                      progress=lambda s: bar.advance(task), engine=args.engine)

    results: dict[tuple[float, int], tuple[list[dict], dict]] = {}
    with Progress(TextColumn("bench {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as bar:
        for t, n in settings:
            if (t, n) not in results:
                recs = records_for(t, n, bar)
                results[(t, n)] = (recs, summarize(recs, greedy=t <= 0, chunk_ms=chunk_ms))
    records, summary = results[settings[0]]
    sweeps = {}
    if len(temps) > 1:
        sweeps["temperature"] = {f"{t:g}": results[(t, counts[0])][1] for t in temps}
    if len(counts) > 1:
        sweeps["sessions"] = {str(n): results[(temps[0], n)][1] for n in counts}

    out = args.out or f"runs/bench-{args.suite}-{args.clock}"
    config = {"args": {k: v for k, v in vars(args).items() if k != "func"}, "decoders": decoders, "model": rt.name,
              "trained": rt.trained, "profile": profile, "clock": args.clock, "suite": args.suite,
              "temperature": temps[0], "concurrent_sessions": counts[0], "side_channel": args.side_channel,
              "chunk_ms": chunk_ms,
              "sessions": len(entries), "session_ids": [e["id"] for e in entries],
              "engine": args.engine, "dtype": args.dtype, "device": args.device, "date": _dt.datetime.now().isoformat(timespec="seconds"),
              "command": " ".join(sys.argv)}
    write_results(out, config, records, summary, plots=not args.no_plots, sweeps=sweeps)

    table = Table(title=f"ticktock bench · {args.suite} · {args.clock} clock · T={temps[0]:g} · N={counts[0]} · "
                        f"{rt.name}")
    cols = [("speak ×", "speak_speedup"), ("tool ×", "tool_speedup"), ("#MAT", "mat"), ("lossless", "lossless"),
            ("speak ℓ ms", "speak_latency_ms"), ("onset ms", "onset_ms"), ("tool ℓ ms", "tool_latency_ms"),
            ("miss", "deadline_miss_rate"), ("lagging", "lagging_sessions"), ("max lag ms", "max_lag_ms_max")]
    table.add_column("decoder")
    for c, _ in cols:
        table.add_column(c, justify="right")
    for d, m in summary.items():
        table.add_row(d, *[_cell(m.get(k)) for _, k in cols])
    console.print(table)
    for axis, sweep in sweeps.items():
        st = Table(title=f"speedup vs {axis}")
        st.add_column(axis)
        for d in decoders[1:]:
            st.add_column(f"{d} speak ×", justify="right")
            st.add_column(f"{d} tool ×", justify="right")
        for x, summ in sweep.items():
            st.add_row(x, *[_cell(summ[d].get(k)) for d in decoders[1:] for k in ("speak_speedup", "tool_speedup")])
        console.print(st)
    console.print(f"results: {out}/ (report.md, summary.json, units.jsonl)")
    if args.json:
        line = {"suite": args.suite, "clock": args.clock, "temperature": temps[0], "concurrent_sessions": counts[0],
                "decoders": json_view(summary)}
        if sweeps:
            line["sweeps"] = {axis: {x: {d: {k: m[d].get(k) for k in ("speak_speedup", "tool_speedup")}
                                         for d in decoders} for x, m in sweep.items()}
                              for axis, sweep in sweeps.items()}
        print(json.dumps(line))
    return 0
