"""`ticktock memory`: KV eviction policies on long sessions, the ASR cascade beside (docs/design.md §4, §10)."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from .cells import cell
from .engine_options import add_engine_options

DEFAULT_POLICIES = "none,streaming_llm,unit_drop,a2t"
DEFAULT_BUDGET = 1024
# two tables of at most 80 columns: (summary key, header) per column
MEMORY_COLUMNS = [("peak_slots", "peak"), ("final_slots", "final"), ("peak_vs_none", "Δpeak"), ("wer", "WER"),
                  ("recall_acc", "recall")]
TIME_COLUMNS = [("unit_ms_mean", "unit ms"), ("unit_ms_p99", "p99 ms"), ("deadline_misses", "misses"),
                ("decision_agreement", "agree"), ("pause_takeover", "pause TO")]


def add_parser(sub) -> None:
    p = sub.add_parser("memory", help="KV eviction policies on long sessions: peak slots, WER, recall, time, behaviour")
    p.add_argument("--suite", default="long", choices=["long", "quick", "heldout", "full"])
    p.add_argument("--policies", default=DEFAULT_POLICIES,
                   help=f"comma-separated policy names (default {DEFAULT_POLICIES}; 'none' is always added)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                   help=f"resident-slot budget B every policy derives its parameters from (default {DEFAULT_BUDGET})")
    p.add_argument("--n", type=int, default=None, help="only the first N sessions")
    p.add_argument("--clock", default="wall", choices=["wall", "cost"])
    p.add_argument("--calibration", default=None, help="cost-model profile (default: the H200 7B one if shipped)")
    p.add_argument("--side-channel", default=None, choices=["off", "after_decision", "after_content"],
                   help="transcription segment placement (default after_content when this build supports it)")
    cascade = p.add_mutually_exclusive_group()
    cascade.add_argument("--cascade", dest="cascade", action="store_true", default=None,
                         help="also run the pocketsphinx ASR cascade (default: when pocketsphinx is installed)")
    cascade.add_argument("--no-cascade", dest="cascade", action="store_false")
    p.add_argument("--model", default=None)
    p.add_argument("--asr-share", type=float, default=0.25,
                   help="the share of a chunk a transcript segment may take (docs/side-channel.md)")
    p.add_argument("--oracle-transcripts", action="store_true",
                   help="the side channel writes the reference words (the δ rule) instead of its own: recall with "
                        "perfect transcripts in the runtime's own context (WER ~0 then; times are not the model's)")
    p.add_argument("--decoder", default="ar", choices=["ar", "sl"],
                   help="how each unit is decoded: ar, or sl (drafts in the idle window beside the transcript); "
                        "greedy, so only the time differs")
    p.add_argument("--device", default="cpu")
    add_engine_options(p)
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes, one (session, policy) run each at a time (for --clock cost: a wall "
                        "clock also times their contention)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _cell(key: str, x) -> str:
    if x is None:
        return "–"
    if key == "peak_vs_none":
        return f"{x:+.1%}"
    return cell(x)


def run(args: argparse.Namespace) -> int:
    import torch

    from ..bench.cascade import PocketSphinx, cascade_available
    from ..bench.memory import (MemoryJob, ordered_policies, policy_tasks, resolve_side_channel, runs_by_policy,
                                summarize)
    from ..bench.profiles import profile_for_clock
    from ..bench.wer import corpus_wer, user_words
    from ..bench.workers import run_jobs
    from ..cache.policies import POLICIES, make_policy
    from ..cli import CommandError
    from ..progress import Progress
    from ..scenarios.store import ensure_suite
    from ..scenarios.suites import load_session

    console = Console(stderr=True)
    policies = ordered_policies(args.policies.split(","))
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise CommandError(f"unknown policy(s) {', '.join(unknown)}; known: {', '.join(POLICIES)}")
    if args.budget <= 0 or (args.n is not None and args.n <= 0) or args.workers <= 0:
        raise CommandError("--budget, --n and --workers must be positive integers")
    if args.workers > 1 and args.clock != "cost":
        console.print("[yellow]note: a wall clock with several workers also times their contention; "
                      "keep workers well under the number of cores")
    try:
        side = resolve_side_channel(args.side_channel)
    except ValueError as err:
        raise CommandError(str(err)) from err
    if args.oracle_transcripts and side != "after_content":
        raise CommandError("--oracle-transcripts needs --side-channel after_content")
    if args.cascade and not cascade_available():
        raise CommandError("--cascade needs pocketsphinx: pip install 'ticktock[bench]'")
    asr = PocketSphinx() if (args.cascade is not False and cascade_available()) else None
    profile = profile_for_clock(args.clock, args.calibration)

    torch.set_grad_enabled(False)
    job = MemoryJob(args.model, args.device, args.clock, profile, side, args.asr_share, args.decoder, args.budget,
                    args.oracle_transcripts, args.engine, args.dtype)
    try:
        rt = job.load(args.device)
    except FileNotFoundError as err:
        raise CommandError(f"{err}; pass --model a model folder (config.json, model.safetensors, "
                           "tokenizer.json)") from err
    if not rt.trained:
        console.print(f"[yellow]note: {rt.name}; slots and times are meaningful, answers are not")
    folder, entries = ensure_suite(args.suite)
    entries = entries[: args.n] if args.n else entries
    units_total = sum(e["n_units"] for e in entries)
    tasks = policy_tasks(entries, policies)
    refs, hyps = [], []

    with Progress(f"memory {args.suite} · B={args.budget}", units_total * (len(policies) + (asr is not None)),
                  "units", console=console) as bar:
        bar.note(f"{len(entries)} sessions · {args.workers} worker(s)")  # every policy run first; the cascade below
        done = run_jobs(job, folder, tasks, args.workers, loaded=rt,
                        on_result=lambda k, _: bar.advance(tasks[k][1]["n_units"]))
        runs = runs_by_policy(tasks, done)
        for e in entries if asr is not None else ():
            bar.note(f"{e['id']} · {asr.name}")
            _, audio = load_session(folder, e)
            refs.append(user_words(e))
            hyps.append(asr.transcribe(audio))
            bar.advance(e["n_units"])

    summary = {
        "suite": args.suite, "sessions": len(entries), "units": units_total, "budget": args.budget,
        "clock": args.clock, "decoder": args.decoder, "model": rt.name, "side_channel": side,
        "oracle_transcripts": args.oracle_transcripts,
        "cascade": asr.version if asr is not None else None,
        "cascade_wer": round(corpus_wer(refs, hyps), 4) if asr is not None else None,
        "params": {p: repr(make_policy(p, budget=args.budget)) for p in policies},
        "policies": {p: summarize(runs[p], runs["none"], side) for p in policies},
    }
    console.print(f"ticktock memory · {args.suite} ({len(entries)} sessions, {units_total} units) · "
                  f"B={args.budget} · {args.clock} clock · {args.decoder} · {rt.name}")
    for title, cols in (("resident KV slots, transcripts and recall", MEMORY_COLUMNS),
                        ("time per unit and behaviour", TIME_COLUMNS)):
        table = Table(title=title)
        table.add_column("policy")
        for _, head in cols:
            table.add_column(head, justify="right")
        for p, row in summary["policies"].items():
            table.add_row(p, *(_cell(k, row.get(k)) for k, _ in cols))
        console.print(table)
    side_note = summary["policies"]["none"]["side_channel"]
    console.print(f"side channel: {side_note}")
    if asr is not None:
        console.print(f"ASR cascade ({summary['cascade']}) WER: {summary['cascade_wer']}")
    if args.json:
        print(json.dumps(summary))
    return 0
