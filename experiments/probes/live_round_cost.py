"""Where a live round's time goes: the first N sessions of the live suite in real time (`bench --live batched`), every
round timed from an idle device to the end of its work and split into its forwards and the host work around them,
by what the round held (units' forwards, idle forwards).

    python experiments/probes/live_round_cost.py --model /tmp/w/tt8b --device cuda --dtype bfloat16 --sessions 32 \
        --seconds 10 --decoder sl
    python experiments/probes/live_round_cost.py --sessions 4 --seconds 4        # the shipped model on a CPU

A round's host work is everything but its forwards, up to the next round (unless the loop waits in between): the
sessions' own steps (verification, proposals, the audio front of units that start, idle work that starts), staging
and the loop. Prints one table and a JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections import defaultdict

import torch

from ticktock.bench import live
from ticktock.bench.replay import run_group
from ticktock.bench.runner import sessions_from_entries
from ticktock.bench.sample import first_units
from ticktock.engine import BatchedEngine, Engine
from ticktock.engine.fast import FastEngine
from ticktock.runtime import load_runtime
from ticktock.scenarios.store import ensure_suite
from ticktock.scenarios.world import tool_result
from ticktock.session import make_clock


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="a model folder (default: the shipped model)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10.0, help="of each session's audio")
    ap.add_argument("--decoder", default="sl")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    rt = load_runtime(args.model, args.device, getattr(torch, args.dtype))
    folder, entries = ensure_suite("live")
    entries = first_units(entries[: args.sessions], math.ceil(args.seconds / rt.protocol.chunk_seconds))
    group = list(sessions_from_entries(folder, entries))
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)

    rounds: list[tuple[int, int, float, float]] = []  # (forwards that must run: units' and idle work past its chunk;
    #                                                    other idle forwards run, round s, forwards s)
    in_forwards = [0.0]
    real_round = live._round

    def timing(forward):
        def timed(self, *a, **k):
            sync()
            t = time.perf_counter()
            out = forward(self, *a, **k)
            sync()
            in_forwards[0] += time.perf_counter() - t
            return out
        return timed

    for cls in {BatchedEngine, Engine, FastEngine}:  # a round's forwards: batched, session graphs, or a session's own
        if "forward" in vars(cls):
            cls.forward = timing(vars(cls)["forward"])

    last_end = [None]  # when the last round ended, unless the loop has waited since

    def timed_round(engine, engines, requests, n_must, batch_from):
        sync()
        t = time.perf_counter()
        if last_end[0] is not None and rounds:  # the host work between that round and this one is the last round's
            n, i, total, fwd = rounds[-1]
            rounds[-1] = (n, i, total + t - last_end[0], fwd)
        in_forwards[0] = 0.0
        out = real_round(engine, engines, requests, n_must, batch_from)
        sync()
        last_end[0] = time.perf_counter()
        rounds.append((n_must, sum(z is not None for z in out[n_must:]), last_end[0] - t, in_forwards[0]))
        return out

    real_wait = live.RealTimer.wait_until

    def waiting(self, t):  # a wait between two rounds is not host work
        last_end[0] = None
        return real_wait(self, t)

    live._round, live.RealTimer.wait_until = timed_round, waiting
    clock = make_clock("wall", device=args.device)
    _, injected = run_group(rt.model, rt.protocol, group, "ar", clock, None, tool_result, engine=args.engine,
                            live="batched")  # the tools' results, for the decoder's run as in `bench`
    rounds.clear()
    run_group(rt.model, rt.protocol, group, args.decoder, clock, injected, tool_result, engine=args.engine,
              live="batched")
    by_kind: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for n_must, n_idle, total, fwd in rounds:
        kind = ("units" if n_must else "") + ("+idle" if n_must and n_idle else "idle" if n_idle else "")
        by_kind[kind].append((total, fwd))
    summary = {}
    print(f"{'round':>10} {'count':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'forwards ms':>12} {'host ms':>8}")
    for kind, xs in sorted(by_kind.items()):
        totals = sorted(x[0] * 1e3 for x in xs)
        mean, fwd = statistics.mean(totals), statistics.mean(x[1] * 1e3 for x in xs)
        row = {"count": len(xs), "p50_ms": round(totals[len(xs) // 2], 3), "p99_ms": round(totals[int(len(xs) * .99)], 3),
               "mean_ms": round(mean, 3), "forwards_ms": round(fwd, 3), "host_ms": round(mean - fwd, 3)}
        summary[kind] = row
        print(f"{kind:>10} {row['count']:>6} {row['p50_ms']:>8.2f} {row['p99_ms']:>8.2f} {row['mean_ms']:>8.2f} "
              f"{row['forwards_ms']:>12.2f} {row['host_ms']:>8.2f}")
    print(json.dumps({"sessions": args.sessions, "seconds": args.seconds, "decoder": args.decoder, "rounds": summary}))


if __name__ == "__main__":
    main()
