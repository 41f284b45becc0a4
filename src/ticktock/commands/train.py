"""`ticktock train base|side-channel`: train the duplex model (on a GPU; see docs/model-card.md, docs/side-channel.md)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train ticktock-tiny (base) on freshly rendered synthetic sessions")
    tsub = p.add_subparsers(dest="stage", required=True)
    b = tsub.add_parser("base", help="train the base duplex model (docs/model-card.md)")
    b.add_argument("--config", default="default", metavar="PRESET|FILE",
                   help="a recipe by preset name (default, stage-m, retrain, omni-finetune) or JSON file")
    b.add_argument("--out", required=True, help="output folder (model/, recipe.json, train_log.jsonl, loss.png)")
    b.add_argument("--init", default=None,
                   help="continue from this model directory, or fine-tune a published checkpoint folder (a "
                        "Qwen2.5-Omni thinker) into a duplex model (docs/models.md)")
    b.add_argument("--protocol", default=None, metavar="FILE|PRESET",
                   help="with --init: the protocol file mapping ticktock's tokens onto the checkpoint's (default: "
                        "its ticktock_protocol.json, else its layout's preset); tokens it lacks are added")
    b.add_argument("--time-budget", type=float, default=1e9, help="stop after this many seconds (then save)")
    b.add_argument("--steps", type=int, default=None, help="override the recipe's steps")
    b.add_argument("--batch", type=int, default=None, help="override the recipe's batch")
    b.add_argument("--lr", type=float, default=None, help="override the recipe's learning rate")
    b.add_argument("--seed", type=int, default=None, help="override the recipe's seed")
    b.add_argument("--set", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="override any other field of the recipe, e.g. data=multi-engine max_len=384 "
                        "family_weights=short_qa=2,tool_call=2 (docs/model-card.md)")
    b.add_argument("--device", default="cuda")
    b.add_argument("--workers", type=int, default=0, help="rendering processes (0: all cores but one)")
    b.set_defaults(func=run_base)

    s = tsub.add_parser("side-channel", help="teach a base model to write a transcription side channel "
                        "(docs/side-channel-training.md)")
    s.add_argument("--config", default="paper", metavar="PRESET|FILE",
                   help="a recipe, or a staged recipe, by preset name (paper, shipped, retrain) or JSON file")
    s.add_argument("--out", required=True, help="output folder (a staged recipe: one folder per stage, side-channel/)")
    s.add_argument("--base", default=None, help="the base model directory (default: the shipped ticktock-tiny)")
    s.add_argument("--init", default=None, help="continue from a run's adapter/ folder, or (a full recipe) from a "
                   "whole side channel: a run's model/ or a decoder shipped alone")
    s.add_argument("--stage", default=None, help="a staged recipe: run only this stage (or merge)")
    s.add_argument("--time-budget", type=float, default=None,
                   help="stop after this many seconds, then save (a staged recipe: each stage's own)")
    s.add_argument("--steps", type=int, default=None, help="override the recipe's steps")
    s.add_argument("--batch", type=int, default=None, help="override the recipe's batch")
    s.add_argument("--lr", type=float, default=None, help="override the recipe's learning rate")
    s.add_argument("--seed", type=int, default=None, help="override the recipe's seed")
    s.add_argument("--device", default="cuda")
    s.add_argument("--workers", type=int, default=0, help="rendering processes (0: all cores but one)")
    s.set_defaults(func=run_side_channel)


def run_base(args: argparse.Namespace) -> int:
    from ..train.base import train_base
    from ..train.base_recipe import load_recipe, parse_set

    init = Path(args.init) if args.init else None
    flags = {k: getattr(args, k) for k in ("steps", "batch", "lr", "seed") if getattr(args, k) is not None}
    try:
        recipe = load_recipe(args.config, {**parse_set(args.set), **flags})
        recipe.check_start(init, args.protocol)
    except ValueError as err:
        raise SystemExit(str(err)) from None
    train_base(Path(args.out), recipe, init, args.device, args.protocol, args.time_budget, args.workers)
    return 0


def run_side_channel(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..train.side_channel import Recipe, load_config, run_stages, train_side_channel

    overrides = {k: getattr(args, k) for k in ("steps", "batch", "lr", "seed") if getattr(args, k) is not None}
    base = Path(args.base) if args.base else None
    try:
        config = load_config(args.config)
        if isinstance(config, Recipe):
            if args.stage is not None:
                raise ValueError("--stage is for a staged recipe")
            recipe = replace(config, **overrides)
            recipe.adapter.check_init(Path(args.init) if args.init else None)
        elif args.init is not None or args.time_budget is not None:
            raise ValueError("a staged recipe starts from --base and gives each stage its time: drop --init and "
                             "--time-budget")
    except ValueError as err:
        raise SystemExit(str(err)) from None
    if isinstance(config, Recipe):
        train_side_channel(Path(args.out), recipe, base, Path(args.init) if args.init else None, args.device,
                           args.time_budget or 1e9, args.workers)
        return 0
    print(f"{len(config.stages)} stages, {config.total_seconds:g} s of training", flush=True)
    try:
        run_stages(config, Path(args.out), base, args.stage, args.device, args.workers, overrides)
    except ValueError as err:  # a stage run out of order, or a chain fitted to another base
        raise SystemExit(str(err)) from None
    return 0
