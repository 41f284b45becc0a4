"""Eager vs fast forward on one GPU at a 7B shape: times, ratios, logits and greedy-token equality.

    PYTHONPATH=src python benchmarks/gpu_fastpath.py [--out fastpath.json]     # H200: about a minute
    PYTHONPATH=src python benchmarks/gpu_fastpath.py --shape test --device cpu --context 200   # smoke test

One `FastEngine` holds one KV cache, prefilled eagerly with `--context` random tokens; every
measured forward is rolled back (`truncate`) so each starts from the same cache. The engine's
`mode` switches between the eager path (`Engine`'s HF-style forward, the oracle) and the
fast path (CUDA graphs; the static-shape path without graphs on a CPU).

Checks (bf16 tolerance): the same weights also run eagerly in fp32 as the reference; for
each case (1 token, 32 tokens, a 15-node tree, ids + audio-like embeddings) the fast path's
logits and new K/V rows must be as close to fp32 as the eager bf16 path's, within 1.5×
(relative L2; fp32 runs: ‖fast - eager‖/‖eager‖ ≤ 1e-4). Greedy tokens of a short
generation must be identical on both paths; a divergence is reported with the eager top-2
margin where it happened (a near-tie, margin < 2·max|Δ logit|, is what bf16 rounding flips).
Targets (7B shape on an H200): 1-token fast ≤ 5.3 ms at 2,048 context, 32-token ≤ 1.3×, 128-token ≤ 2×.
The last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from ticktock.bench.calibrate import DTYPES, binary_tree, device_name, dtype_name, random_model, time_ms
from ticktock.engine import Engine, Segment
from ticktock.engine.fast import FastEngine
from ticktock.model import preset

TEXT = 4  # SlotKind.TEXT
TARGETS = {"fast_1_ms": 5.3, "ratio_32": 1.3, "ratio_128": 2.0}
TOLERANCE_LOW = ("‖x - fp32‖/‖fp32‖ of the fast path's logits and new K/V ≤ max(1.5 × the eager path's, 5e-3); "
                 "fp32 = the same weights run eagerly in fp32")
TOLERANCE_FP32 = "‖fast - eager‖/‖eager‖ ≤ 1e-4 for logits and new K/V"


def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def _rel(x: torch.Tensor, y: torch.Tensor) -> float:
    return ((x - y).norm() / y.norm()).item()


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="qwen2.5-7b")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--dtype", default=None, choices=list(DTYPES), help="default: bf16 on cuda, fp32 on cpu")
    p.add_argument("--context", type=int, default=2048)
    p.add_argument("--new-tokens", default="1,32,128")
    p.add_argument("--repeats", type=int, default=30, help="timed fast forwards per size (median)")
    p.add_argument("--eager-repeats", type=int, default=8)
    p.add_argument("--gen", type=int, default=24, help="greedy tokens generated on each path")
    p.add_argument("--attention", default="auto", choices=["auto", "sdpa", "matmul"])
    p.add_argument("--compile", default="auto", choices=["auto", "on", "off"],
                   help="fuse the elementwise stages with torch.compile (auto: on CUDA when Triton is there)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="write the full results JSON here")
    return p.parse_args(argv)


@torch.no_grad()
def main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device visible to torch; use --device cpu for a smoke test", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    dtype = DTYPES[args.dtype or ("bf16" if device.type == "cuda" else "fp32")]
    sizes = [int(x) for x in args.new_tokens.split(",")]
    fast_mode = "graph" if device.type == "cuda" else "static"
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    cfg = preset(args.shape)
    model = random_model(cfg, device, dtype, args.seed, direct=device.type == "cuda")
    vocab, c = cfg.decoder.vocab_size, args.context
    eng = FastEngine(model, max_slots=c + 256, mode="eager", attention=args.attention,
                     compile={"auto": None, "on": True, "off": False}[args.compile])
    ids = lambda n: torch.randint(0, vocab, (n,), generator=gen)  # noqa: E731
    prompt = [Segment(ids(c), [TEXT] * c)]
    eng.forward(prompt, unit=0)  # eager prefill: real K/V in the cache
    ref = None
    if dtype != torch.float32:  # the reference: the same weights in fp32, eager, same prompt
        ref = Engine(copy.deepcopy(model).float(), max_slots=c + 256)
        ref.forward(prompt, unit=0)
    print(f"{args.shape} on {device_name(device)} ({dtype_name(dtype)}): built and prefilled {c} tokens "
          f"in {time.perf_counter() - t_start:.1f} s", file=sys.stderr)

    def call(linear, tree=None, engine=eng):
        def run():
            kw = {} if tree is None else {"tree_tokens": tree, "tree_parents": binary_tree(len(tree))}
            out = engine.forward(linear, unit=1, **kw)
            engine.cache.truncate(c)
            return out
        return run

    # ---------------------------------------------------------------- timing
    timing = {}
    for n in sizes:
        run = call([Segment(ids(n), [TEXT] * n)])
        eng.mode = "eager"
        e = statistics.median(time_ms(run, device, warmup=2, repeats=args.eager_repeats))
        eng.mode = fast_mode
        f = statistics.median(time_ms(run, device, warmup=3, repeats=args.repeats))
        timing[n] = {"eager_ms": round(e, 3), "fast_ms": round(f, 3), "speedup": round(e / f, 2)}
    if 1 in timing:
        for n in sizes:
            timing[n]["eager_ratio"] = round(timing[n]["eager_ms"] / timing[1]["eager_ms"], 3)
            timing[n]["fast_ratio"] = round(timing[n]["fast_ms"] / timing[1]["fast_ms"], 3)

    # ---------------------------------------------------------------- logits and K/V
    def new_kv(engine, n_new):
        return torch.stack([engine.cache.k[:, :, :, c:c + n_new], engine.cache.v[:, :, :, c:c + n_new]]).float()

    def compare(name, linear, tree=None):
        n_new = sum(len(x) for x in linear) + len(tree or [])
        eng.mode = "eager"
        a, ka = call(linear, tree)().float(), new_kv(eng, n_new)
        eng.mode = fast_mode
        b, kb = call(linear, tree)().float(), new_kv(eng, n_new)
        sigma, d = a.std().item(), (a - b).abs().max().item()
        row = {"case": name, "fast_vs_eager": _sig(_rel(b, a)), "kv_fast_vs_eager": _sig(_rel(kb, ka)),
               "max_abs_diff": _sig(d), "max_over_std": _sig(d / sigma),
               "top1_agree": round((a.argmax(-1) == b.argmax(-1)).float().mean().item(), 4)}
        finite = bool(torch.isfinite(b).all() and torch.isfinite(kb).all())
        if ref is None:
            row["ok"] = finite and _rel(b, a) <= 1e-4 and _rel(kb, ka) <= 1e-4
            return row
        r, kr = call(linear, tree, engine=ref)().float(), new_kv(ref, n_new)
        row.update(eager_vs_fp32=_sig(_rel(a, r)), fast_vs_fp32=_sig(_rel(b, r)),
                   kv_eager_vs_fp32=_sig(_rel(ka, kr)), kv_fast_vs_fp32=_sig(_rel(kb, kr)))
        row["ok"] = (finite and _rel(b, r) <= max(1.5 * _rel(a, r), 5e-3)
                     and _rel(kb, kr) <= max(1.5 * _rel(ka, kr), 5e-3))
        return row

    emb = (torch.randn(10, cfg.decoder.hidden_size, generator=gen) * 0.02).to(dtype)
    checks = [
        compare("chain-1", [Segment(ids(1), [TEXT])]),
        compare("chain-32", [Segment(ids(32), [TEXT] * 32)]),
        compare("tree-1+15", [Segment(ids(1), [TEXT])], ids(15).tolist()),
        compare("ids+embeds+ids", [Segment(ids(1), [1]), Segment(emb, [2] * 10), Segment(ids(2), [TEXT] * 2)]),
    ]
    max_diff = max(x["max_abs_diff"] for x in checks)

    # ---------------------------------------------------------------- greedy generation
    first = int(ids(1))

    def generate(mode):
        eng.mode = mode
        tok, toks, margins = first, [], []
        for _ in range(args.gen):
            top = eng.forward([Segment(torch.tensor([tok]), [TEXT])], unit=2)[0].topk(2)
            tok = int(top.indices[0])
            toks.append(tok)
            margins.append(float(top.values[0] - top.values[1]))
        eng.cache.truncate(c)
        return toks, margins

    toks_e, margins_e = generate("eager")
    toks_f, _ = generate(fast_mode)
    same = toks_e == toks_f
    greedy = {"tokens": args.gen, "identical": same}
    if not same:
        i = next(j for j, (x, y) in enumerate(zip(toks_e, toks_f)) if x != y)
        greedy.update(first_divergence=i, eager_margin_there=_sig(margins_e[i]), near_tie=margins_e[i] < 2 * max_diff)

    # ---------------------------------------------------------------- report
    emb_w = model.lm.model.embed_tokens.weight
    weights = sum(p.numel() * p.element_size() for p in model.parameters()) - emb_w.numel() * emb_w.element_size()
    d = cfg.decoder
    kv_bytes = 2 * d.num_hidden_layers * d.num_key_value_heads * d.head_dim * c * eng.cache.k.element_size()
    result = {
        "shape": args.shape, "device": device_name(device), "torch": torch.__version__, "dtype": dtype_name(dtype),
        "context": c, "mode": fast_mode, "fuse_mlp": bool(eng.blocks and eng.blocks[0].wgu is not None),
        "compile": args.compile,
        "graphs": len(eng.graphs), "timing": {str(n): v for n, v in timing.items()},
        "attention": {f"{tb}x{lb}": {"chosen": k,
                                     "replay_ms": {a: round(t, 3) for a, t in eng.timings.get((tb, lb), {}).items()}}
                      for (tb, lb), k in sorted(eng.chosen.items())},
        "checks": checks, "tolerance": TOLERANCE_LOW if ref is not None else TOLERANCE_FP32,
        "greedy": greedy, "seconds": round(time.perf_counter() - t_start, 1),
    }
    if 1 in timing:
        result["fast_1_GBps"] = round((weights + kv_bytes) / (timing[1]["fast_ms"] / 1000) / 1e9, 1)
        result["targets"] = {"fast_1_ms": timing[1]["fast_ms"] <= TARGETS["fast_1_ms"]}
        for n in (32, 128):
            if n in timing:
                result["targets"][f"ratio_{n}"] = timing[n]["fast_ratio"] <= TARGETS[f"ratio_{n}"]
    result["ok"] = all(x["ok"] for x in checks) and (same or greedy.get("near_tie", False))

    print(f"\n{'new':>5} {'eager ms':>9} {'fast ms':>8} {'speedup':>7} {'eager n/1':>9} {'fast n/1':>8}")
    for n, v in timing.items():
        print(f"{n:>5} {v['eager_ms']:>9.2f} {v['fast_ms']:>8.2f} {v['speedup']:>7.2f} "
              f"{v.get('eager_ratio', float('nan')):>9.2f} {v.get('fast_ratio', float('nan')):>8.2f}")
    for x in checks:
        vs = (f"vs fp32: eager {x['eager_vs_fp32']:.3g} fast {x['fast_vs_fp32']:.3g}, K/V eager "
              f"{x['kv_eager_vs_fp32']:.3g} fast {x['kv_fast_vs_fp32']:.3g}; ") if "fast_vs_fp32" in x else ""
        print(f"{x['case']:>16}: {vs}fast vs eager {x['fast_vs_eager']:.3g} (max {x['max_over_std']:.3g} σ), "
              f"top-1 agree {x['top1_agree']:.2f}  {'ok' if x['ok'] else 'FAIL'}")
    print(f"greedy {args.gen} tokens: {'identical' if same else greedy}")
    for key, v in result["attention"].items():
        print(f"graph {key}: {v['chosen']} {v['replay_ms'] or ''}")
    if "targets" in result:
        print(f"targets (H200, 7B): {result['targets']}  ·  1-token fast ≈ {result['fast_1_GBps']} GB/s")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
