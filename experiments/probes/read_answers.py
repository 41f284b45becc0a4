"""Read or heard? A model's answers to a written request set given as text, beside what it answers when it hears them.

Each request of `phrasings` (the blind set, experiments/phrasing_cpu/blind.py; or `shapes`: ten drawn per QA intent
from the training's composed sentence shapes, `intents.shapes`, as a training window would draw them) is put in the context as a
transcript over silence, exactly as a training window of requests read as text (`train.read_requests`), and the
reply is scored teacher-forced: `ok` when the model's argmax equals every output token of the reply (its decision,
words, tool call and turn end), which is what greedy decoding would write. A request answered read but not heard is
a hearing miss; one missed read too is a miss of the decoder's own understanding.

    python experiments/probes/read_answers.py MODEL_DIR [--set phrasings|blind|shapes [--per-intent N] [--match TEXT]]
        [--heard FILE]

A request missed in `phrasings` whose intent's `shapes` draws are answered is one the model read in training's
forms but not in new ones; missed in both, the intent's training forms were not learnt.

`--heard` takes `answers.py SUITE MODEL --jsonl FILE`'s records and prints the 2 x 2 table (read vs heard).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from collections import Counter
from pathlib import Path

import torch

sys.path[:0] = [str(Path(__file__).parents[1])]

from phrasing_cpu.blind import BLIND  # noqa: E402
from ticktock.model import load_model  # noqa: E402
from ticktock.protocol import DuplexProtocol  # noqa: E402
from ticktock.scenarios.intents import qa  # noqa: E402
from ticktock.scenarios.intents.exchange import Exchange, fresh_phrasings  # noqa: E402
from ticktock.scenarios.phrasings import PHRASINGS, request_script  # noqa: E402
from ticktock.train.examples import filler_id  # noqa: E402
from ticktock.train.read_requests import build_read_example, read_requests  # noqa: E402
from ticktock.train.trainer import collate, model_loss  # noqa: E402


def shape_draws(per_intent: int = 10, match: str = "", seed: int = 0) -> list[tuple[str, Exchange]]:
    """Up to `per_intent` QA requests of each intent drawn from its composed shapes only (fixed seed), those that
    contain `match` where given (e.g. "today" for the premise-first forms, " or " for either-or)."""
    rng = random.Random(seed)
    out = []
    with fresh_phrasings(composed_share=1.0):
        for ask in dict.fromkeys(qa.INTENTS):
            drawn = (ask(rng) for _ in range(4000 if match else per_intent))
            out += [("short_qa", ex) for ex in itertools.islice((e for e in drawn if match in e.request), per_intent)]
    return out


SETS = {"phrasings": PHRASINGS, "blind": BLIND}  # and "shapes", drawn with --per-intent and --match


@torch.no_grad()
def read_ok(model, protocol: DuplexProtocol, family: str, exchange, seed: int) -> bool:
    """Whether the model writes the whole reply to `exchange` read as text (teacher-forced argmax = labels)."""
    rng = random.Random(seed)
    script = request_script(rng, family, exchange)
    ex = build_read_example(protocol, script.system, read_requests(script)[:1], rng)
    b = collate([ex], filler_id(protocol), model.cfg.audio.frames_per_chunk * 160, model.device)
    return bool(model_loss(model, b, train=False)[1]["acc"] == 1.0)  # every output token the argmax


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--set", default="phrasings", choices=[*sorted(SETS), "shapes"])
    ap.add_argument("--per-intent", type=int, default=10, help="shapes: requests drawn per QA intent")
    ap.add_argument("--match", default="", help="shapes: only requests containing this text (e.g. 'today', ' or ')")
    ap.add_argument("--heard", help="answers.py --jsonl records of the same set, for the read-vs-heard table")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    model, tok = load_model(args.model)
    model.eval()
    protocol = DuplexProtocol(tok)
    heard = {}
    if args.heard:
        heard = {i: json.loads(line)["ok"] for i, line in enumerate(Path(args.heard).read_text().splitlines())}
    table, counts, intents = Counter(), Counter(), Counter()
    requests = shape_draws(args.per_intent, args.match) if args.set == "shapes" else SETS[args.set]
    for i, (family, exchange) in enumerate(requests):
        ok = read_ok(model, protocol, family, exchange, seed=i)
        counts[family, ok] += 1
        intents[exchange.intent, ok] += 1
        h = heard.get(i)
        if h is not None:
            table[ok, h] += 1
        print(f"{'ok   ' if ok else 'WRONG'} {'heard ' + ('ok' if h else 'WRONG') if h is not None else ''} "
              f"{family:9s} {exchange.request}")
    for family in sorted({f for f, _ in counts}):
        print(f"read {family}: {counts[family, True]}/{counts[family, True] + counts[family, False]}")
    print("read by intent:", ", ".join(f"{i} {intents[i, True]}/{intents[i, True] + intents[i, False]}"
                                       for i in sorted({i for i, _ in intents})))
    if table:
        print("read ok & heard ok", table[True, True], "· read ok & heard WRONG", table[True, False],
              "· read WRONG & heard ok", table[False, True], "· both WRONG", table[False, False])


if __name__ == "__main__":
    main()
