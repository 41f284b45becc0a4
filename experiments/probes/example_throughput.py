"""How many side-channel training examples a second the trainer's intake delivers, for 1..N workers.

The trainer's own path (`train.intake.ExampleIntake` over a recipe's `Mixture`) with nothing training, so a
run's `made` / `seconds` can be set against it: far below, the trainer is starving its workers (experiments/LOG.md,
run Z); near it, rendering is the bound. Also times one long session's rendering and one cut of it.
Usage: python experiments/probes/example_throughput.py [--workers 1,4,13] [--seconds 20] [--memory-share 0.8]
       [--long-share 0.8] [--long-reuse 256] [--fact-swap 1.0] [--history-shuffle 0] [--recall-share 1.0]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from tokenizers import Tokenizer

from ticktock.model.io import DEFAULT_MODEL
from ticktock.protocol import DuplexProtocol
from ticktock.train.intake import ExampleIntake
from ticktock.train.side_channel.memory_examples import build_memory_example
from ticktock.train.side_channel.mixture import Mixture
from ticktock.train.side_channel.sources.long import LongSource
from ticktock.train.side_channel.sources.memory import MemorySource
from ticktock.train.side_channel.sources.plain import PlainSource


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,4,13")
    ap.add_argument("--seconds", type=float, default=20.0)
    for name, default in (("memory-share", 0.8), ("long-share", 0.8), ("fact-swap", 1.0), ("history-shuffle", 0.0),
                          ("recall-share", 1.0)):
        ap.add_argument(f"--{name}", type=float, default=default)
    ap.add_argument("--long-reuse", type=int, default=256)
    args = ap.parse_args()
    proto = DuplexProtocol(Tokenizer.from_file(str(DEFAULT_MODEL / "tokenizer.json")))
    knobs = {"recall_share": args.recall_share, "fact_swap": args.fact_swap, "history_shuffle": args.history_shuffle}
    short = (1 - args.long_share) * args.memory_share  # of the short sessions, `memory_share` are memory examples
    factory = Mixture(proto, [LongSource(args.long_share, 2560, reuse=args.long_reuse, **knobs),
                              MemorySource(short, **knobs), PlainSource(1 - args.long_share - short)],
                      "after_content", {"dictation_recall": 8, "pause_handling": 2}, delay_jitter=0.3)
    t = time.time()
    r = factory.render_long(1)
    (system, units, words, audio), ends = r.session, r.recall_ends
    t_render = time.time() - t
    t = time.time()
    build_memory_example(proto, system, units, words, audio, random.Random(0), "after_content", 2560, max_gap=0,
                         recall_ends=ends, recall_share=1.0)
    print(json.dumps({"long_render_s": round(t_render, 2), "cut_ms": round(1000 * (time.time() - t), 1)}), flush=True)
    for n in (int(w) for w in args.workers.split(",")):
        intake = ExampleIntake(factory, n, seed=7, capacity=100_000).start()
        try:
            t = time.time()
            while time.time() - t < args.seconds:
                intake.wait_for(1)
                time.sleep(0.05)
            made = intake.made
            elapsed = time.time() - t
        finally:
            intake.stop()
        print(json.dumps({"workers": n, "examples_per_s": round(made / elapsed, 1), "errors": intake.errors}),
              flush=True)


if __name__ == "__main__":
    main()
