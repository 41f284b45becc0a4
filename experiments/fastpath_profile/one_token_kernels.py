"""A full-size shape's 1-token forward per attention kernel, against the HBM bandwidth floor (one GPU).

    python experiments/fastpath_profile/one_token_kernels.py --shape qwen2.5-omni-7b-thinker [--json OUT]

For each kernel (`FastEngine(attention=...)`: sdpa, matmul, fused, and auto, which keeps the fastest per bucket)
and each context, the wall time of one 1-token forward as `ticktock calibrate` times it (device synchronised
around each, median of --repeats), the floor (every decoder weight but the embedding table and the resident KV,
read once, over --bandwidth) and their ratio: the bar of docs/models.md is a ratio of at most 1.5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from ticktock.bench.calibrate import fill_cache, forward_calls, random_model, time_ms
from ticktock.engine import FastEngine
from ticktock.model import preset

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from full_size_session import bandwidth_floor_ms  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="qwen2.5-omni-7b-thinker")
    p.add_argument("--contexts", default="256,1024,4096")
    p.add_argument("--kernels", default="sdpa,matmul,fused,auto")
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--bandwidth", type=float, default=4.3e12, help="HBM bytes/s (H200: 4.3e12 usable of 4.8e12)")
    p.add_argument("--device", default="cuda",
                   help="cpu: a dry run of the static path (the fused kernels under TRITON_INTERPRET=1)")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    contexts = [int(c) for c in args.contexts.split(",")]
    t0 = time.perf_counter()
    cuda = args.device == "cuda"
    model = random_model(preset(args.shape), args.device, torch.bfloat16 if cuda else torch.float32).eval()
    device = torch.cuda.get_device_name() if cuda else "cpu"
    print(f"{args.shape} on {device}: built in {time.perf_counter() - t0:.0f} s", flush=True)
    rows = []
    with torch.no_grad():
        for kernel in args.kernels.split(","):
            try:
                eng = FastEngine(model, max(contexts) + 256, attention=kernel, mode="auto" if cuda else "static")
            except ValueError as err:  # e.g. fused without Triton: the other kernels still run
                print(f"  {kernel:>6}: {err}", flush=True)
                continue
            for c in contexts:
                fill_cache(eng, c)
                chain, _ = forward_calls(eng, c, 1, torch.Generator().manual_seed(0))
                ms = statistics.median(time_ms(chain, model.device, warmup=3, repeats=args.repeats))
                floor = bandwidth_floor_ms(model, c, args.bandwidth)
                chosen = sorted(set(eng.chosen.values()))
                rows.append({"kernel": kernel, "context": c, "ms": round(ms, 3), "floor_ms": round(floor, 3),
                             "ratio": round(ms / floor, 3), "chosen": chosen, "timings": {
                                 f"{k[0]}x{k[1]}": v for k, v in eng.timings.items()}})
                print(f"  {kernel:>6} {c:5d} slots: {ms:6.3f} ms  floor {floor:5.3f} ms  ratio {ms / floor:5.3f}  "
                      f"graphs {chosen}", flush=True)
            del eng
            if cuda:
                torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps({"shape": args.shape, "device": device,
                                               "bandwidth": args.bandwidth, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
