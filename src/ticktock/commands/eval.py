"""`ticktock eval`: model quality on a suite (AR greedy, closed loop)."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .engine_options import add_engine_options


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="model quality on a suite: decisions, answers, tool calls, turn-taking")
    p.add_argument("--suite", default="quick",
                   choices=["quick", "heldout", "full", "pairs", "takeover", "phrasings", "heldout-sam",
                            "heldout-flite", "heldout-festival-kdl", "heldout-mbrola", "heldout-pico",
                            "heldout-connected"],
                   help="phrasings: 51 requests in other words than the training templates; heldout-sam, heldout-flite: "
                        "heldout's sessions in engines that never train; heldout-festival-kdl: in festival's English "
                        "voice; heldout-mbrola, heldout-pico: in MBROLA's and Pico's voices; heldout-connected: heldout's sessions said in one go, not word by word (default quick)")
    p.add_argument("--n", type=int, default=None, help="only the first N sessions")
    p.add_argument("--families", default=None, metavar="NAME,...",
                   help="only sessions of these task families, e.g. pause_handling (after --n)")
    p.add_argument("--model", default=None)
    p.add_argument("--device", default="cpu")
    add_engine_options(p)
    p.add_argument("--side-channel", default="off", choices=["off", "after_decision", "after_content"],
                   help="run with the transcription side channel (the model's adapter merged in) and also "
                        "report how far its behaviour is from the base model's on the same sessions")
    p.add_argument("--base", default=None,
                   help="with --side-channel: the base model its behaviour is compared with (default: --model)")
    p.add_argument("--phase-jitter", action="store_true",
                   help="every session's audio shifted by a seeded random 0-1 s (the suite's '-jitter' copy: same "
                        "scripts and voices, labels re-timed), so speech falls anywhere against the 1 s chunks")
    p.add_argument("--system-prompt", default=None, metavar="TEXT|default",
                   help="every session's system prompt replaced by TEXT, or by the live default ('default': the "
                        "prompt `demo` and `serve` use)")
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes, a session each at a time (outcomes do not depend on it)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import torch

    from ..bench.quality import EvalJob, behaviour_vs_base, per_family, score
    from ..bench.workers import run_jobs
    from ..cli import CommandError
    from ..progress import Progress
    from ..scenarios.compose import DEFAULT_SYSTEM_PROMPT
    from ..scenarios.store import ensure_suite
    from ..scenarios.suites import GENERATORS, SUITES

    torch.set_grad_enabled(False)
    console = Console(stderr=True)
    families = set(args.families.split(",")) if args.families else None
    unknown = families - set(GENERATORS) if families else set()
    if unknown:
        raise CommandError(f"unknown families: {', '.join(sorted(unknown))}; known: {', '.join(GENERATORS)}")
    if args.workers <= 0:
        raise CommandError("--workers must be a positive integer")
    side = None if args.side_channel == "off" else args.side_channel
    job = EvalJob(args.model, args.base, args.device, side, args.engine, args.dtype)
    try:
        rt, rt_side = job.load(args.device)
    except FileNotFoundError as err:
        raise CommandError(f"{err}; pass --model a model folder (config.json, model.safetensors, "
                           "tokenizer.json)") from err
    suite = args.suite
    if args.phase_jitter:
        suite = f"{args.suite}-jitter"
        if suite not in SUITES:
            raise CommandError(f"--phase-jitter: suite {args.suite!r} has no shifted copy; use one of "
                               f"{', '.join(s.jitter_of for s in SUITES.values() if s.jitter_of)}")
    folder, entries = ensure_suite(suite)
    entries = entries[: args.n] if args.n else entries
    entries = [e for e in entries if families is None or e["family"] in families]
    if args.system_prompt is not None:
        system = DEFAULT_SYSTEM_PROMPT if args.system_prompt == "default" else args.system_prompt
        entries = [{**e, "system": system} for e in entries]

    with Progress(f"eval {args.suite}", len(entries), "sessions", console=console) as bar:
        done = run_jobs(job, folder, entries, args.workers, loaded=(rt, rt_side), on_result=lambda *_: bar.advance())
    base = [b for b, _ in done]
    outcomes = [s for _, s in done if s is not None] or base
    summary = score(outcomes)
    summary["decision_acc_by_family"] = per_family(outcomes)
    summary.update({"suite": suite, "model": (rt_side or rt).name})
    if args.system_prompt is not None:
        summary["system_prompt"] = args.system_prompt
    if rt_side is not None:
        summary.update(side_channel=side, **behaviour_vs_base(base, outcomes))
    table = Table(title=f"ticktock eval · {args.suite} · {rt.name}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in summary.items():
        if not isinstance(v, (dict, list)):
            table.add_row(k, str(v))
        elif k.endswith("_ci95") and v:
            table.add_row(k, f"{v[0]} … {v[1]}")
    for tag, (base_only, side_only) in summary.get("takeover_discordant", {}).items():
        table.add_row(escape(f"{tag} takeovers[base only · side channel only]"), f"{base_only} · {side_only}")
    for f, v in summary["decision_acc_by_family"].items():
        table.add_row(escape(f"decision_acc[{f}]"), str(v))  # unescaped, rich reads [family] as markup
    console.print(table)
    if args.json:
        print(json.dumps(summary))
    return 0
