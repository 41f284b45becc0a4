"""`ticktock calibrate`: measure forward time vs (new tokens, context) and write a cost-model profile.

    ticktock calibrate --shape tiny --device cpu --out benchmarks/profiles/cpu-ticktock-tiny.json
    ticktock calibrate --shape qwen2.5-7b --device cuda --fast --out benchmarks/profiles/h200-qwen2.5-7b-bf16.json

Also runnable as `python -m ticktock.commands.calibrate ...` (imports no audio stack for decoder-only shapes).
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..bench.calibrate import (DEFAULT_CONTEXTS, DEFAULT_NEW_TOKENS, DTYPES, Grid, build_model, calibrate,
                               dtype_name, summarize, write_profile)
from ..model.config import PRESETS
from .engine_options import pick_device


def _ints(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not out or min(out) < 0:
        raise argparse.ArgumentTypeError(f"expected non-negative integers, got {text!r}")
    return sorted(set(out))  # the cost model interpolates over ascending grids


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", default=None,
                     help="model directory (ticktock or HF Qwen2/Llama); default: the shipped model")
    src.add_argument("--shape", default=None, choices=list(PRESETS), help="a preset shape with random weights")
    p.add_argument("--device", choices=["cpu", "cuda"], default=None, help="default: cuda if available")
    p.add_argument("--dtype", choices=list(DTYPES), default=None, help="default: fp32 on cpu, bf16 on cuda")
    p.add_argument("--contexts", type=_ints, default=DEFAULT_CONTEXTS, metavar="N,N,...",
                   help=f"resident KV slots before the forward (default {','.join(map(str, DEFAULT_CONTEXTS))})")
    p.add_argument("--new-tokens", type=_ints, default=DEFAULT_NEW_TOKENS, metavar="N,N,...",
                   help=f"tokens per forward (default {','.join(map(str, DEFAULT_NEW_TOKENS))})")
    p.add_argument("--fast", action=argparse.BooleanOptionalAction, default=None,
                   help="use the CUDA-graph fast path (default: on for cuda)")
    p.add_argument("--tree", action=argparse.BooleanOptionalAction, default=True,
                   help="also time each forward shaped as a draft tree (default: on)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per point (median)")
    p.add_argument("--warmup", type=int, default=2, help="untimed runs per point")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: torch's choice)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="profile JSON to write")
    p.add_argument("--json", action="store_true", help="last stdout line: a JSON summary")


def add_parser(sub) -> None:
    p = sub.add_parser("calibrate", help="time forwards vs new tokens and context; write a cost-model profile")
    add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console, err = Console(), Console(stderr=True)
    device = pick_device(args.device)
    dtype = DTYPES[args.dtype or ("bf16" if device == "cuda" else "fp32")]
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.fast and device != "cuda":
        err.print("[yellow]--fast needs CUDA: timing the eager path on the CPU[/]")
    grid = Grid(args.contexts, args.new_tokens, repeats=max(1, args.repeats), warmup=max(0, args.warmup),
                tree=args.tree)
    err.print(f"building {args.shape or args.model or 'the shipped model'} on {device} ({dtype_name(dtype)}) …")
    model, name = build_model(args.shape, args.model, device, dtype, args.seed)
    with Progress(TextColumn("calibrating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("grid", total=grid.points() * grid.repeats)
        profile = calibrate(model, grid, name=name, shape=args.shape, fast=args.fast, seed=args.seed,
                            progress=lambda: bar.advance(task))
    path = write_profile(profile, args.out)

    table = Table(title=f"forward ms · {name} · {profile['device_name']} · {profile['dtype']} · {profile['engine']}")
    table.add_column("context", justify="right")
    for n in profile["new_tokens"]:
        table.add_column(f"n={n}", justify="right")
    for c, row in zip(profile["context"], profile["ms"]):
        table.add_row(str(c), *(f"{v:.2f}" for v in row))
    console.print(table)
    if profile["has_audio_encoder"]:
        console.print(f"audio encoder: {profile['encoder_ms']:.2f} ms per chunk")
    console.print(f"wrote {path}")
    if args.json:
        print(json.dumps({"profile": str(path), **summarize(profile)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ticktock calibrate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
