"""`ticktock eval`: model quality on a suite (AR greedy, closed loop)."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.progress import track
from rich.table import Table


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="model quality on a suite: decisions, answers, tool calls, turn-taking")
    p.add_argument("--suite", default="quick", choices=["quick", "heldout", "full"])
    p.add_argument("--n", type=int, default=None, help="only the first N sessions")
    p.add_argument("--model", default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import torch

    from ..evaluation.quality import per_family, run_session, score
    from ..runtime import load_runtime
    from ..scenarios.store import ensure_suite
    from ..scenarios.suites import load_session
    from ..scenarios.world import run_tool

    torch.set_grad_enabled(False)
    console = Console(stderr=True)
    rt = load_runtime(args.model, args.device)
    folder, entries = ensure_suite(args.suite)
    entries = entries[: args.n] if args.n else entries

    def tool(call: str) -> str | None:
        try:
            return run_tool(call)
        except Exception as err:  # a malformed call is the model's error; it gets an error result, as in use
            return f"error: {err}"

    outcomes = []
    for e in track(entries, description=f"eval {args.suite}", console=console):
        _, audio = load_session(folder, e)
        outcomes.append(run_session(rt.model, rt.protocol, e, audio, tool))
    summary = score(outcomes)
    summary["decision_acc_by_family"] = per_family(outcomes)
    summary.update({"suite": args.suite, "model": rt.name})
    table = Table(title=f"ticktock eval · {args.suite} · {rt.name}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in summary.items():
        if not isinstance(v, dict):
            table.add_row(k, str(v))
    for f, v in summary["decision_acc_by_family"].items():
        table.add_row(f"decision_acc[{f}]", str(v))
    console.print(table)
    if args.json:
        print(json.dumps(summary))
    return 0
