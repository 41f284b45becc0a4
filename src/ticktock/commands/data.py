"""`ticktock data make`: render a suite of scripted sessions (manifest.jsonl + wavs)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("data", help="render suites of synthetic spoken sessions")
    dsub = p.add_subparsers(dest="action", required=True)
    m = dsub.add_parser("make", help="render a suite to DIR/manifest.jsonl and DIR/audio/*.wav")
    m.add_argument("--suite", required=True,
                   choices=["quick", "heldout", "full", "long", "live", "pairs", "takeover", "phrasings", "quick-jitter", "heldout-jitter",
                            "heldout-sam", "heldout-flite", "heldout-festival-kdl", "heldout-mbrola", "heldout-pico",
                            "heldout-connected"],
                   help="heldout-sam / heldout-flite: heldout's sessions in engines that never train (SAM, which needs "
                        "node and scripts/prepare_sam.sh; flite); heldout-festival-kdl: in festival's English kdl voice "
                        "(festvox-kdlpc16k); heldout-mbrola / heldout-pico: in MBROLA's voices through espeak-ng, in "
                        "SVOX Pico (Debian contrib / non-free); heldout-connected: heldout's sessions with each utterance said in one go, "
                        "not word by word")
    m.add_argument("--out", default=None, help="folder (default: $TICKTOCK_DATA or ~/.cache/ticktock/data/<suite>)")
    m.add_argument("--n", type=int, default=None, help="number of sessions (default: the suite's size)")
    m.add_argument("--workers", type=int, default=None)
    m.set_defaults(func=run_make)


def run_make(args: argparse.Namespace) -> int:
    from ..scenarios.store import data_root, suite_lock
    from ..scenarios.suites import write_suite

    out = Path(args.out) if args.out else data_root() / args.suite
    with suite_lock(out):  # not while another command renders into the same folder
        path = write_suite(args.suite, out, n=args.n, workers=args.workers)
    print(f"wrote {path}")
    return 0
