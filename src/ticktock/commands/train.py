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
    b.add_argument("--max-offset", type=int, default=3000,
                   help="random logical-position offsets after the prefix, in [0, N): long sessions reach 10,000")
    b.set_defaults(func=run_base)

    s = tsub.add_parser("side-channel", help="LoRA-adapt a base model to write a transcription side channel")
    s.add_argument("--out", required=True, help="output folder (model/, adapter/, train_log.jsonl, loss.png, side_channel.json)")
    s.add_argument("--init", default=None, help="the base model directory (default: the shipped ticktock-tiny), or a "
                   "--full run's model to continue (with --full), whole or as its decoder alone (save_decoder_side_channel)")
    s.add_argument("--placement", default="after_decision", choices=["after_decision", "after_content", "both"],
                   help="where the segment sits in the training targets")
    s.add_argument("--no-distill", action="store_true", help="transcript cross-entropy only (the ablation)")
    s.add_argument("--steps", type=int, default=4000)
    s.add_argument("--batch", type=int, default=32)
    s.add_argument("--lr", type=float, default=5e-4, help="adapters; the two new rows learn 10x faster")
    s.add_argument("--time-budget", type=float, default=1e9, help="stop after this many seconds (then save)")
    s.add_argument("--workers", type=int, default=0, help="rendering processes (0: all cores but one)")
    s.add_argument("--buffer", type=int, default=40000, metavar="N",
                   help="replay buffer: the newest N examples (a long-session one is ~300 KB; lower it on a small machine)")
    s.add_argument("--device", default="cuda")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--max-len", type=int, default=512, help="tokens per training window (student sequence)")
    s.add_argument("--memory-share", type=float, default=0.0,
                   help="share of memory examples: the context as a2t eviction leaves it (old units as text only)")
    s.add_argument("--family-weights", default=None,
                   help="over-sample task families, e.g. dictation_recall=3,pause_handling=2 (others weigh 1)")
    s.add_argument("--long-share", type=float, default=0.0,
                   help="share of memory examples cut from 5-10 minute sessions (recall over minutes)")
    s.add_argument("--long-max-len", type=int, default=2048, help="tokens per window of those examples")
    s.add_argument("--long-reuse", type=int, default=16, metavar="N",
                   help="examples cut from each rendered long session (rendering one takes seconds; with "
                        "--fact-swap every cut reads other facts, so many cuts are cheap fresh examples)")
    s.add_argument("--recall-share", type=float, default=0.0,
                   help="share of the memory examples (long or short) that end at a recall answer where the session has one")
    s.add_argument("--pause-weight", type=float, default=0.0, metavar="W",
                   help="W x the decision KL at units inside a paused request (0: off; docs/side-channel.md)")
    s.add_argument("--hold-tags", default="pause", metavar="TAG,...",
                   help="script tags of the units --pause-weight weighs: pause (default), backchannel, or both")
    s.add_argument("--recall-weight", type=float, default=0.0, metavar="W",
                   help="W x the cross-entropy at recall answers of memory examples, on top of their share of the "
                        "memory term (0: off; docs/side-channel.md)")
    s.add_argument("--distill-weight", type=float, default=1.0, metavar="W",
                   help="W x the distillation terms (kd, dec, turn): more holds the base's behaviour against heavy "
                        "memory and recall terms (docs/side-channel.md)")
    s.add_argument("--fact-swap", type=float, default=0.0, metavar="S",
                   help="share of the memory examples whose evicted facts (groceries, names, days, a code's digits) "
                        "are renamed, answer included, so recall is read from the transcripts rather than learnt "
                        "by heart (docs/side-channel.md)")
    s.add_argument("--history-shuffle", type=float, default=0.0, metavar="H",
                   help="share of the memory examples whose evicted exchanges are laid out anew (those holding a "
                        "fact keep their order; others are dropped or moved), so an answer's place in a session "
                        "cannot be learnt (docs/side-channel.md)")
    s.add_argument("--memory-distill", type=int, default=0, metavar="T",
                   help="distil the memory examples' retained units (not a recall answer's) from the base on their "
                        "last T units whole, no history: ordinary replies in long contexts stay the base's "
                        "(0: off; docs/side-channel.md)")
    s.add_argument("--exact-kv", action="store_true",
                   help="memory examples are the session from its start laid out whole under the runtime's eviction "
                        "mask (each token sees what a2t had left when it was written; up to --long-max-len tokens; "
                        "every unit supervised), not a compacted re-encoding (docs/side-channel.md)")
    s.add_argument("--exact-distill", action="store_true",
                   help="with --exact-kv: learn only the recall answers of those examples by cross-entropy and "
                        "distil every other unit from the base on the same units with all their audio (the base's "
                        "turn-taking rather than the script's; tried once: worse, docs/side-channel.md)")
    s.add_argument("--gate", default="all", choices=["all", "segment"],
                   help="where the adapter acts: every token (merged) or a segment's tokens only (docs/side-channel.md)")
    s.add_argument("--delay-jitter", type=float, default=0.0, metavar="SECONDS",
                   help="half the sessions assign words to units with δ = 0.5 s ± this and teach through "
                        "distillation only (the model's own segments come a little early or late; "
                        "docs/side-channel.md)")
    s.add_argument("--init-adapter", default=None, help="continue from this adapter folder (default: a fresh one)")
    s.add_argument("--teacher", default=None,
                   help="with --full and an --init that already is a side-channel model (a --full run's model, which "
                        "the run continues): the plain base to distil from (default: the shipped base)")
    s.add_argument("--full", action="store_true",
                   help="train every decoder weight instead of a LoRA (teacher: a frozen copy of the base); "
                        "OUT/model is the side-channel model whole (docs/side-channel.md)")
    s.set_defaults(func=run_side_channel)


def run_base(args: argparse.Namespace) -> int:
    if args.max_offset < 1:
        raise SystemExit(f"--max-offset must be at least 1, got {args.max_offset}")
    if args.warmup < 1:
        raise SystemExit(f"--warmup must be at least 1 step, got {args.warmup}")
    from ..train.base import parse_family_weights, parse_reply_weights, train_base
    from ..train.trainer import TrainConfig

    cfg = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, warmup=args.warmup, time_budget_s=args.time_budget,
                      workers=args.workers, seed=args.seed, max_len=args.max_len, buffer=_buffer(args))
    train_base(Path(args.out), cfg, args.preset, Path(args.init) if args.init else None, args.device,
               transcribe_share=args.transcribe_share, init_decoder=Path(args.init_decoder) if args.init_decoder else None,
               word_weight=args.word_weight, family_weights=parse_family_weights(args.family_weights),
               reply_weights=parse_reply_weights(args.reply_weights), max_offset=args.max_offset,
               protocol=args.protocol)
    return 0


EXACT_LONG_BUFFER = 1024  # exact long memory examples in the replay buffer: ~20 GB of audio at most


def _buffer(args: argparse.Namespace) -> int:
    if args.buffer < args.batch:
        raise SystemExit(f"--buffer ({args.buffer}) must hold at least a batch ({args.batch})")
    return args.buffer


def run_side_channel(args: argparse.Namespace) -> int:
    from ..train.side_channel import SideChannelConfig, continues_full_run, train_side_channel
    from ..train.trainer import TrainConfig

    cfg = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, warmup=100, time_budget_s=args.time_budget,
                      workers=args.workers, seed=args.seed, max_len=args.max_len, buffer=_buffer(args))
    from ..train.base import parse_family_weights

    for name in ("memory_share", "long_share", "recall_share", "fact_swap", "history_shuffle"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise SystemExit(f"--{name.replace('_', '-')} must be within [0, 1], got {getattr(args, name)}")
    for name in ("pause_weight", "recall_weight", "distill_weight"):
        if getattr(args, name) < 0:
            raise SystemExit(f"--{name.replace('_', '-')} must be non-negative, got {getattr(args, name)}")
    if args.recall_weight > 0 and args.memory_share == 0 and args.long_share == 0:
        raise SystemExit("--recall-weight acts on memory examples: give --memory-share or --long-share")
    if args.distill_weight != 1.0 and args.no_distill:
        raise SystemExit("--distill-weight weighs distillation: drop --no-distill")
    if args.pause_weight > 0 and args.no_distill:
        raise SystemExit("--pause-weight is a distillation term: it needs distillation (drop --no-distill)")
    hold_tags = tuple(t for t in args.hold_tags.split(",") if t)
    if not hold_tags or not set(hold_tags) <= {"pause", "backchannel"}:
        raise SystemExit(f"--hold-tags takes pause and/or backchannel, got {args.hold_tags!r}")
    try:
        continues_full_run(args.init, args.full, args.init_adapter, args.teacher)
    except ValueError as err:
        raise SystemExit(str(err)) from None
    if args.full and args.gate == "segment":
        raise SystemExit("--gate segment needs a LoRA: drop --full")
    if args.memory_distill < 0:
        raise SystemExit(f"--memory-distill must be non-negative, got {args.memory_distill}")
    if args.memory_distill > 0 and (args.no_distill or (args.memory_share == 0 and args.long_share == 0)):
        raise SystemExit("--memory-distill distils memory examples: give --memory-share or --long-share, "
                         "without --no-distill")
    if args.exact_kv and (args.memory_share == 0 and args.long_share == 0):
        raise SystemExit("--exact-kv lays out memory examples: give --memory-share or --long-share")
    if args.exact_kv and (args.fact_swap or args.history_shuffle or args.memory_distill):
        raise SystemExit("--exact-kv examples hold their audio whole: --fact-swap, --history-shuffle and "
                         "--memory-distill do not apply to them")
    if args.exact_distill and (not args.exact_kv or args.no_distill):
        raise SystemExit("--exact-distill distils --exact-kv examples: give --exact-kv, without --no-distill")
    if args.exact_kv and args.long_share > 0 and args.buffer > EXACT_LONG_BUFFER:
        raise SystemExit(f"--exact-kv long examples carry up to 10 minutes of audio (~19 MB each): give --buffer "
                         f"{EXACT_LONG_BUFFER} or less (got {args.buffer})")
    if args.long_reuse < 1:
        raise SystemExit(f"--long-reuse must be at least 1, got {args.long_reuse}")
    if args.long_max_len < args.max_len:
        raise SystemExit(f"--long-max-len ({args.long_max_len}) must be at least --max-len ({args.max_len})")
    sc = SideChannelConfig(placement=args.placement, distill=not args.no_distill, memory_share=args.memory_share,
                           family_weights=parse_family_weights(args.family_weights), long_share=args.long_share,
                           long_max_len=args.long_max_len, long_reuse=args.long_reuse, gate=args.gate,
                           delay_jitter=args.delay_jitter, recall_share=args.recall_share,
                           pause_weight=args.pause_weight, full=args.full, hold_tags=hold_tags,
                           recall_weight=args.recall_weight, distill_weight=args.distill_weight,
                           fact_swap=args.fact_swap,
                           history_shuffle=args.history_shuffle, memory_distill=args.memory_distill,
                           exact_kv=args.exact_kv, exact_distill=args.exact_distill)
    train_side_channel(Path(args.out), cfg, sc, Path(args.init) if args.init else None, args.device,
                       init_adapter=Path(args.init_adapter) if args.init_adapter else None,
                       teacher=Path(args.teacher) if args.teacher else None)
    return 0
