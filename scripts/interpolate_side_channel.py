"""Interpolate two side-channel models of one base, weight by weight: (1 - t) * A + t * B.

Fine-tunes of one base usually lie in one basin, so a point between them can keep some of each: A is the shipped
pair (the base with its adapter merged in) or, with --start, a whole side-channel model; B a whole-decoder run
(`ticktock train side-channel --full`) that learnt recall but drifted (from the base's behaviour, or from A's
transcripts). Writes a whole side-channel model (marked merged) to OUT. With --keep-rows, B's two `<|asr_*|>` rows
are A's first: B may then be the plain base (pull A's behaviour back towards it, keeping A's segment tokens).
Usage: python scripts/interpolate_side_channel.py B_MODEL OUT --t 0.5 [--start A_MODEL | --base BASE_DIR] [--keep-rows]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from ticktock.model import save_model
from ticktock.model.adapter import mark_merged
from ticktock.runtime import load_runtime


def interpolate(a: torch.nn.Module, b: torch.nn.Module, t: float) -> dict[str, torch.Tensor]:
    """(1 - t) * a + t * b for every floating-point tensor of two models of one architecture."""
    sa, sb = a.state_dict(), b.state_dict()
    if sa.keys() != sb.keys():
        raise ValueError("the two models have different weights")
    return {k: torch.lerp(v.float(), sb[k].float(), t) if v.is_floating_point() else v for k, v in sa.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", help="the whole side-channel model to move towards (B)")
    ap.add_argument("out")
    ap.add_argument("--t", type=float, required=True, help="0 = the shipped pair, 1 = B")
    ap.add_argument("--base", default=None, help="the base whose shipped side channel is A (default: the shipped base)")
    ap.add_argument("--start", default=None, help="A as a whole side-channel model instead of the shipped pair")
    ap.add_argument("--keep-rows", action="store_true", help="B's <|asr_start|>/<|asr_end|> rows are A's")
    args = ap.parse_args()
    if not 0.0 <= args.t <= 1.0:
        raise SystemExit(f"--t must lie in [0, 1], got {args.t}")
    a = load_runtime(args.start) if args.start else load_runtime(args.base, side_channel=True)
    b = load_runtime(args.other).model
    if args.keep_rows:
        ids = [a.protocol.id("asr_start"), a.protocol.id("asr_end")]
        with torch.no_grad():  # tied with the output rows
            b.lm.model.embed_tokens.weight[ids] = a.model.lm.model.embed_tokens.weight[ids].to(b.lm.model.embed_tokens.weight)
    a.model.load_state_dict(interpolate(a.model, b, args.t))
    save_model(a.model, a.protocol.tokenizer, Path(args.out))
    mark_merged(args.out, "full")
    print(f"wrote {args.out}: {1 - args.t:g} x {args.start or a.name} + {args.t:g} x {args.other}")


if __name__ == "__main__":
    main()
