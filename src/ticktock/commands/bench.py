"""`ticktock bench`: replay a suite through every decoder and compare latency against AR (docs/design.md §7, §10)."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .cells import cell as _cell
from .engine_options import add_engine_options, torch_dtype

DEFAULT_DECODERS = "ar,pld,tr,lookahead,sl"
LIVE_MODES = ("serial", "batched")  # bench.live.MODES (not imported: the parser stays light)
LIVE_KEYS = ("latency_ms_p50", "latency_ms_p99", "deadline_miss_rate", "lagging_sessions", "device_mb_per_session")


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="decoder latency on a suite: speedup over AR, #MAT, deadline misses, lag")
    p.add_argument("--suite", default="quick", choices=["quick", "full", "heldout", "long", "pairs", "live"])
    p.add_argument("--n", type=int, default=None, help="only the first N sessions of the suite")
    p.add_argument("--sample", type=int, default=None, metavar="N",
                   help="a stratified sample of N sessions covering every family (seeded by --seed; ids in config.json)")
    p.add_argument("--part", default=None, metavar="K/M",
                   help="only the K-th of M slices of the sessions (a long run in resumable pieces; "
                        "merge the parts with scripts/merge_bench.py)")
    p.add_argument("--sessions", default="1",
                   help="sessions sharing one device at a time; a list (1,2,4) also sweeps it (Fig. 4c)")
    p.add_argument("--live", default=None, choices=LIVE_MODES,
                   help="real time (needs --clock wall): each N of --sessions runs the first N sessions at once, "
                        "their chunks arriving on the clock, staggered; serial: one unit at a time, batched: "
                        "units in flight share batched forwards (docs/scaling.md)")
    p.add_argument("--seconds", type=float, default=None,
                   help="only the first SECONDS of each session's audio (e.g. the long suite's sessions cut short)")
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
    p.add_argument("--out", default=None,
                   help="results folder (default runs/bench-<suite>-<clock> in the current directory; the --json "
                        "line names it as \"out\")")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _floats(text: str, what: str, cast=float) -> list:
    from ..cli import CommandError

    try:
        vals = [cast(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise CommandError(f"--{what}: expected a comma-separated list of numbers, got {text!r}") from None
    if not vals:
        raise CommandError(f"--{what}: no value given")
    return vals


def run(args: argparse.Namespace) -> int:
    import torch

    from ..bench.calibrate import device_name
    from ..bench.metrics import json_view, summarize
    from ..bench.profiles import profile_for_clock, scheduled_protocol
    from ..bench.replay import ReplayJob, group_tasks, ordered_decoders
    from ..bench.report import capacity, write_results
    from ..bench.sample import first_units, part_of, stratified_sample
    from ..bench.workers import run_jobs
    from ..cli import CommandError
    from ..decoding.registry import DECODERS
    from ..engine import graph_capture_summary
    from ..progress import Progress
    from ..runtime import load_runtime
    from ..scenarios.store import ensure_suite
    from ..session import make_clock

    console = Console(stderr=True)
    decoders = ordered_decoders(args.decoders.split(","))
    unknown = [d for d in decoders if d not in DECODERS]
    if unknown:
        raise CommandError(f"unknown decoder(s) {', '.join(unknown)}; known: {', '.join(DECODERS)}")
    temps = _floats(args.temperature, "temperature")
    counts = _floats(args.sessions, "sessions", int)
    if min(counts) < 1 or min(temps) < 0:
        raise CommandError("--sessions must be >= 1 and --temperature >= 0")
    if args.live and (args.clock != "wall" or args.workers > 1):
        raise CommandError("--live runs sessions in real time: it needs --clock wall and one worker")
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
            raise CommandError(str(err)) from err
    chunk_ms = rt.protocol.chunk_seconds * 1000
    if args.seconds is not None:
        try:
            entries = first_units(entries, math.ceil(args.seconds / rt.protocol.chunk_seconds))
        except ValueError as err:
            raise CommandError(f"--seconds: {err}") from err
    if args.live and len(entries) < max(counts):
        raise CommandError(f"--live with --sessions up to {max(counts)} needs as many sessions; the selection "
                           f"has {len(entries)}")
    side_channel = None if args.side_channel == "off" else args.side_channel
    if side_channel:
        rt.protocol = scheduled_protocol(rt.protocol, args.clock, profile, args.device, args.asr_share)
    # the main run, then the sweeps' other points: temperature at the first N, N at the first temperature
    settings = [(temps[0], counts[0])] + [(t, counts[0]) for t in temps[1:]] + [(temps[0], n) for n in counts[1:]]

    def records_for(temperature: float, concurrent: int) -> list[dict]:
        job = ReplayJob(args.model, args.device, args.clock, profile, tuple(decoders), temperature, args.seed,
                        concurrent, side_channel, rt.protocol.max_asr_tokens, args.engine, args.dtype, args.live)
        tasks = group_tasks(entries[:concurrent] if args.live else entries, concurrent)
        with Progress(f"bench {args.suite} · T={temperature:g} · N={concurrent} · {len(decoders)} decoders",
                      sum(len(g) for _, g in tasks), "sessions", console=console) as bar:
            done = run_jobs(job, folder, tasks, args.workers, loaded=(rt, clock),
                            on_result=lambda k, _: bar.advance(len(tasks[k][1])))
        return [r for recs in done for r in recs]

    results: dict[tuple[float, int], tuple[list[dict], dict]] = {}
    for t, n in settings:
        if (t, n) not in results:
            recs = records_for(t, n)
            results[(t, n)] = (recs, summarize(recs, greedy=t <= 0, chunk_ms=chunk_ms))
    records, summary = results[settings[0]]
    # each swept axis: its points' summaries (sweeps.json) and, but for the main run's, their unit records
    axes = {"temperature": {f"{t:g}": results[(t, counts[0])] for t in temps},
            "sessions": {str(n): results[(temps[0], n)] for n in counts}}
    sweeps = {axis: {x: r[1] for x, r in points.items()} for axis, points in axes.items() if len(points) > 1}
    sweep_units = {f"{axis}-{x}": r[0] for axis, points in axes.items() for x, r in points.items()
                   if r[0] is not records}

    out = args.out or f"runs/bench-{args.suite}-{args.clock}"
    config = {"args": {k: v for k, v in vars(args).items() if k != "func"}, "decoders": decoders, "model": rt.name,
              "trained": rt.trained, "profile": profile, "clock": args.clock, "suite": args.suite,
              "temperature": temps[0], "concurrent_sessions": counts[0], "side_channel": args.side_channel,
              "chunk_ms": chunk_ms,
              "sessions": len(entries), "session_ids": [e["id"] for e in entries],
              "engine": args.engine, "dtype": args.dtype, "device": args.device,
              "hardware": device_name(rt.model.device), "date": _dt.datetime.now().isoformat(timespec="seconds"),
              "command": " ".join(sys.argv)}
    write_results(out, config, records, summary, plots=not args.no_plots, sweeps=sweeps,
                  sweep_units=sweep_units)

    console.print(f"ticktock bench · {args.suite} · {args.clock} clock · T={temps[0]:g} · N={counts[0]} · {rt.name}")
    for table in summary_tables(summary):
        console.print(table)
    for axis, sweep in sweeps.items():
        for table in sweep_tables(axis, sweep, decoders[1:]):
            console.print(table)
    if args.live and "sessions" in sweeps:
        console.print("largest N with no deadline missed and no session lagging: "
                      + ", ".join(f"{d} {capacity(sweeps['sessions'], d)}" for d in decoders))
    captured = graph_capture_summary(rt.model)  # a live run's set-up cost beside its real time
    if captured:
        console.print(captured)
    console.print(f"results: {out}/ (report.md, summary.json, units.jsonl)")
    if args.json:
        line = {"suite": args.suite, "clock": args.clock, "temperature": temps[0], "concurrent_sessions": counts[0],
                "decoders": json_view(summary)}
        if sweeps:
            keys = ("speak_speedup", "tool_speedup") + (LIVE_KEYS if args.live else ())
            line["sweeps"] = {axis: {x: {d: {k: m[d].get(k) for k in keys} for d in decoders}
                                     for x, m in sweep.items()}
                              for axis, sweep in sweeps.items()}
        if args.live and "sessions" in sweeps:
            line["capacity"] = {d: capacity(sweeps["sessions"], d) for d in decoders}
        line["out"] = str(Path(out).resolve())  # the results folder (last: the keys before it stay as they were)
        print(json.dumps(line))
    return 0


# The summary in two tables of at most 80 columns: (header, summary key) per column.
SPEED_COLUMNS = [("speak ×", "speak_speedup"), ("tool ×", "tool_speedup"), ("#MAT", "mat"), ("lossless", "lossless"),
                 ("speak ℓ ms", "speak_latency_ms"), ("tool ℓ ms", "tool_latency_ms")]
DEADLINE_COLUMNS = [("onset ms", "onset_ms"), ("miss rate", "deadline_miss_rate"),
                    ("lagging", "lagging_sessions"), ("max lag ms", "max_lag_ms_max")]


def summary_tables(summary: dict[str, dict]) -> list[Table]:
    """Speed (speedup over AR, #MAT, losslessness, mean post-audio latency ℓ) and deadlines (onset, share of
    units missing the deadline, share of sessions that lag, the worst lag), one row per decoder each."""
    tables = []
    for title, cols in (("speed", SPEED_COLUMNS), ("deadlines", DEADLINE_COLUMNS)):
        table = Table(title=title)
        table.add_column("decoder")
        for head, _ in cols:
            table.add_column(head, justify="right")
        for d, m in summary.items():
            table.add_row(d, *[_cell(m.get(k)) for _, k in cols])
        tables.append(table)
    return tables


SWEEP_SYMBOL = {"temperature": "T=", "sessions": "N="}


def sweep_tables(axis: str, sweep: dict[str, dict], decoders: list[str]) -> list[Table]:
    """Speak and tool speedup over AR along a sweep: one row per decoder, one column per point of the sweep."""
    tables = []
    for what, key in (("speak", "speak_speedup"), ("tool", "tool_speedup")):
        table = Table(title=f"{what} speedup vs {axis}")
        table.add_column("decoder")
        for x in sweep:
            table.add_column(f"{SWEEP_SYMBOL.get(axis, axis + ' ')}{x}", justify="right")
        for d in decoders:
            table.add_row(d, *[_cell(summ[d].get(key)) for summ in sweep.values()])
        tables.append(table)
    return tables
