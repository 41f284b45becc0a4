"""Token agreement with `ar` in bf16, and whether every difference starts at a near-tie.

    python scripts/bf16_agreement.py BF16_RUN FP32_RUN [--json]

BF16_RUN and FP32_RUN are `ticktock bench` results folders (units.jsonl[.gz]; both hold `ar`) over
overlapping sessions. bf16 noise: on the units `ar` committed identically in both dtypes, how far the
top-2 margin of each token moved between them (max |Δ|). Then, per decoder in BF16_RUN, the share of
units token-identical to bf16 `ar`, and for each session's first differing unit the margin (in `ar`'s run)
at the first token where they part: a parting is explained when that margin is below the noise. Later
units of a parted session are counted apart (their history differs, so their tokens may too).
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
    """Per decoder: units identical to `ar`; of the differing ones, those where the session first parts from `ar`
    (judged by `ar`'s margin at the first differing token) and those after it (their history already differs)."""
    ref, out = runs["ar"], {}
    for dec, units in runs.items():
        if dec == "ar":
            continue
        same = differ = explained = after = 0
        worst = 0.0
        parted: set[str] = set()
        for key in sorted(units):  # (session, unit): a session's units in order
            u, r = units[key], ref.get(key)
            if r is None:
                continue
            if u["tokens"] == r["tokens"]:
                same += 1
                continue
            differ += 1
            if key[0] in parted:
                after += 1
                continue
            parted.add(key[0])
            i = first_difference(u["tokens"], r["tokens"])
            margin = r["margins"][i] if i < len(r["margins"]) else float("inf")
            worst = max(worst, margin)
            explained += margin < noise
        out[dec] = {"units": same + differ, "identical": round(same / max(1, same + differ), 5),
                    "differing": differ, "sessions_parting": len(parted), "parting_at_near_tie": explained,
                    "differing_after_parting": after, "max_margin_where_parting": worst}
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
                print(f"{dtype} {dec}: {m['identical']:.2%} of {m['units']} units identical to ar; {m['differing']} "
                      f"differ: {m['sessions_parting']} sessions part from ar, {m['parting_at_near_tie']} of them at "
                      f"a near-tie (max margin there {m['max_margin_where_parting']:.4f}), "
                      f"{m['differing_after_parting']} units after a session parted")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
