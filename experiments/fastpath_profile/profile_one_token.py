"""Where a 1-token forward's time goes on the fast engine: kernel time by kind inside one graph replay.

    python experiments/fastpath_profile/profile_one_token.py --shape qwen2.5-omni-7b-thinker --context 1024

Prints the wall time per forward back to back and synchronised (as a session decodes), the sum of its kernels' durations (the rest is gaps between kernels),
and the kernels grouped by name, longest first.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from ticktock.bench.calibrate import fill_cache, forward_calls, random_model
from ticktock.engine import FastEngine
from ticktock.model import preset


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--shape", default="qwen2.5-omni-7b-thinker")
    p.add_argument("--context", type=int, default=1024)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--attention", default="auto", choices=["auto", "sdpa", "matmul", "fused"])
    args = p.parse_args()
    model = random_model(preset(args.shape), "cuda", torch.bfloat16).eval()
    eng = FastEngine(model, args.context + 256, attention=args.attention)
    with torch.no_grad():
        fill_cache(eng, args.context)
        chain, _ = forward_calls(eng, args.context, 1, torch.Generator().manual_seed(0))
        for _ in range(5):
            chain()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(50):
            chain()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t) / 50 * 1e3
        synced = []
        for _ in range(50):  # as a session decodes: the host waits for each forward's token
            t = time.perf_counter()
            chain()
            torch.cuda.synchronize()
            synced.append((time.perf_counter() - t) * 1e3)
        synced.sort()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                chain()
            torch.cuda.synchronize()
    by = defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            by[e.name[:90]][0] += e.device_time_total / 10 / 1e3
            by[e.name[:90]][1] += 1
    total = sum(v[0] for v in by.values())
    print(f"{args.shape} context {args.context} attention {args.attention}: back to back {wall:.3f} ms per forward, "
          f"synchronised {synced[25]:.3f} ms (median); kernels {total:.3f} ms; "
          f"kernels per forward {sum(v[1] for v in by.values()) / 10:.0f}")
    for name, (ms, n) in sorted(by.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"  {ms:7.3f} ms  {n / 10:6.1f}x  {name}")


if __name__ == "__main__":
    main()
