"""Token agreement with `ar` in bf16, and whether every difference starts at a near-tie.

    python scripts/bf16_agreement.py BF16_RUN FP32_RUN [--json]

BF16_RUN and FP32_RUN are `ticktock bench` results folders (units.jsonl[.gz]; both hold `ar`) over
overlapping sessions. bf16 noise: on the units `ar` committed identically in both dtypes, how far the
top-2 margin of each token moved between them (max |Δ|). Then, per decoder in BF16_RUN, the share of
units token-identical to bf16 `ar`, and for each differing unit the margin (in `ar`'s run) at the first
token where they part: a difference is explained when that margin is below the noise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from merge_bench import read_units  # noqa: E402


def by_key(records: list[dict]) -> dict[str, dict[tuple[str, int], dict]]:
    out: dict[str, dict[tuple[str, int], dict]] = defaultdict(dict)
    for r in records:
        out[r["decoder"]][(r["session"], r["unit"])] = r
    return out


def bf16_noise(bf16_ar: dict, fp32_ar: dict) -> tuple[float, int]:
    """Max |Δ margin| over tokens of units both dtypes committed identically, and how many tokens."""
    deltas = []
    for key, a in fp32_ar.items():
        b = bf16_ar.get(key)
        if b is not None and a["tokens"] == b["tokens"]:
            deltas += [abs(x - y) for x, y in zip(a["margins"], b["margins"])]
    return (max(deltas) if deltas else float("nan")), len(deltas)


def first_difference(a: list[int], b: list[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def agreement(runs: dict, noise: float) -> dict[str, dict]:
    ref, out = runs["ar"], {}
    for dec, units in runs.items():
        if dec == "ar":
            continue
        same = differ = explained = 0
        worst = 0.0
        for key, u in units.items():
            r = ref.get(key)
            if r is None:
                continue
            if u["tokens"] == r["tokens"]:
                same += 1
                continue
            differ += 1
            i = first_difference(u["tokens"], r["tokens"])
            margin = r["margins"][i] if i < len(r["margins"]) else float("inf")
            worst = max(worst, margin)
            explained += margin < noise
        out[dec] = {"units": same + differ, "identical": round(same / max(1, same + differ), 5),
                    "differing": differ, "differing_at_near_tie": explained, "max_margin_at_difference": worst}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bf16_run")
    ap.add_argument("fp32_run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    bf16, fp32 = by_key(read_units(Path(args.bf16_run))), by_key(read_units(Path(args.fp32_run)))
    noise, n = bf16_noise(bf16["ar"], fp32["ar"])
    res = {"bf16_noise_margin": noise, "noise_tokens": n, "bf16": agreement(bf16, noise),
           "fp32": agreement(fp32, 0.0)}
    if not args.json:
        print(f"bf16 noise (max |Δ top-2 margin|, {n} tokens): {noise:.4f}")
        for dtype in ("bf16", "fp32"):
            for dec, m in res[dtype].items():
                print(f"{dtype} {dec}: {m['identical']:.2%} of {m['units']} units identical to ar; "
                      f"{m['differing']} differ, {m['differing_at_near_tie']} at a near-tie "
                      f"(max margin there {m['max_margin_at_difference']:.4f})")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
