"""`ticktock train base|side-channel`: train the duplex model (on a GPU; see docs/model-card.md, docs/side-channel.md)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train ticktock-tiny (base) on freshly rendered synthetic sessions")
    tsub = p.add_subparsers(dest="stage", required=True)
    b = tsub.add_parser("base", help="train the base duplex model")
    b.add_argument("--out", required=True, help="output folder (model/, train_log.jsonl, loss.png)")
    b.add_argument("--preset", default="tiny")
    b.add_argument("--init", default=None,
                   help="continue from this model directory, or fine-tune a published checkpoint folder (a "
                        "Qwen2.5-Omni thinker) into a duplex model (docs/models.md)")
    b.add_argument("--protocol", default=None, metavar="FILE|PRESET",
                   help="with --init: the protocol file mapping ticktock's tokens onto the checkpoint's (default: "
                        "its ticktock_protocol.json, else its layout's preset); tokens it lacks are added")
    b.add_argument("--steps", type=int, default=20000)
    b.add_argument("--batch", type=int, default=64)
    b.add_argument("--lr", type=float, default=1.5e-3)
    b.add_argument("--warmup", type=int, default=300, help="steps of linear learning-rate warm-up (then cosine)")
    b.add_argument("--time-budget", type=float, default=1e9, help="stop after this many seconds (then save)")
    b.add_argument("--workers", type=int, default=0, help="rendering processes (0: all cores but one)")
    b.add_argument("--buffer", type=int, default=40000, metavar="N",
                   help="replay buffer: the newest N examples (a long-session one is ~300 KB; lower it on a small machine)")
    b.add_argument("--device", default="cuda")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--max-len", type=int, default=512, help="tokens per training window")
    b.add_argument("--transcribe-share", type=float, default=0.3, help="share of listening pre-training examples")
    b.add_argument("--init-decoder", default=None,
                   help="start the decoder (and tokenizer) from this model directory, with a fresh audio encoder")
    b.add_argument("--word-weight", type=float, default=0.5,
                   help="weight of the encoder's frame-level word objective (0: off; ticktock's own encoder only: "
                        "a published checkpoint's audio tower trains with 0)")
    b.add_argument("--family-weights", default=None, metavar="NAME=W,...",
                   help="over-sample task families, e.g. short_qa=2,tool_call=2 (others weigh 1)")
    b.add_argument("--reply-weights", default=None, metavar="WORD=W,...",
                   help="over-sample sessions whose replies contain a word, e.g. minus=6 (others weigh 1)")
    b.add_argument("--data", default="espeak", choices=["espeak", "multi-engine"],
                   help="what is rendered: espeak (espeak-ng voices, noise and gain) or multi-engine (also festival's "
                        "training voices, the augmentation chain, phase shifts, varied prompts and phrasings: "
                        "experiments/retraining-plan.md)")
    b.add_argument("--max-offset", type=int, default=3000,
                   help="random logical-position offsets after the prefix, in [0, N): long sessions reach 10,000")
    b.set_defaults(func=run_base)

    s = tsub.add_parser("side-channel", help="teach a base model to write a transcription side channel "
                        "(docs/side-channel-training.md)")
    s.add_argument("--config", default="paper", metavar="PRESET|FILE",
                   help="a recipe, or a staged recipe, by preset name (paper, shipped) or JSON file")
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
    if args.max_offset < 1:
        raise SystemExit(f"--max-offset must be at least 1, got {args.max_offset}")
    if args.warmup < 1:
        raise SystemExit(f"--warmup must be at least 1 step, got {args.warmup}")
    from ..train.base import parse_family_weights, parse_reply_weights, train_base
    from ..train.data import DATA_PRESETS
    from ..train.trainer import TrainConfig

    cfg = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, warmup=args.warmup, time_budget_s=args.time_budget,
                      workers=args.workers, seed=args.seed, max_len=args.max_len, buffer=_buffer(args))
    train_base(Path(args.out), cfg, args.preset, Path(args.init) if args.init else None, args.device,
               transcribe_share=args.transcribe_share, init_decoder=Path(args.init_decoder) if args.init_decoder else None,
               word_weight=args.word_weight, family_weights=parse_family_weights(args.family_weights),
               reply_weights=parse_reply_weights(args.reply_weights), max_offset=args.max_offset,
               protocol=args.protocol, data=DATA_PRESETS[args.data])
    return 0


def _buffer(args: argparse.Namespace) -> int:
    if args.buffer < args.batch:
        raise SystemExit(f"--buffer ({args.buffer}) must hold at least a batch ({args.batch})")
    return args.buffer


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
    run_stages(config, Path(args.out), base, args.stage, args.device, args.workers, overrides)
    return 0
