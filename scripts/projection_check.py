"""How far the cost clock's projection is from the wall clock, on the same units.

    python scripts/projection_check.py WALL_DIR COST_DIR [--json]

WALL_DIR: a benchmark's results measured on a device (`bench --clock wall`); COST_DIR: the same sessions and
decoders replayed on the cost clock with that device's profile (`bench --clock cost --calibration FILE`). Units
are matched by (decoder, session, unit) and kept where both committed the same tokens (bf16 on the device may
part at near-ties). Per decoder: the mean post-audio ℓ on each clock and their ratio, and the same for the
forwards alone (ℓ less the audio front's time), for speak / tool / all units.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from merge_bench import read_units  # scripts/ is on the path of a script run from it


def units_by_key(folder: Path) -> dict[tuple[str, str, int], dict]:
    return {(r["decoder"], r["session"], r["unit"]): r for r in read_units(folder)}


def forwards_ms(r: dict) -> float:
    return r["post_audio_ms"] - (r.get("encoder_ms") or 0.0)


def compare(wall: dict, cost: dict) -> dict:
    """decoder -> kind -> {units, wall ℓ, cost ℓ, ℓ ratio, wall forwards, cost forwards, forwards ratio}."""
    both = [k for k in wall if k in cost and wall[k]["tokens"] == cost[k]["tokens"]]
    out: dict = {}
    for dec in sorted({k[0] for k in both}):
        out[dec] = {}
        for kind in ("speak", "tool", "all"):
            ks = [k for k in both if k[0] == dec and (kind == "all" or wall[k]["decision"] == kind)]
            if not ks:
                continue
            w = statistics.mean(wall[k]["post_audio_ms"] for k in ks)
            c = statistics.mean(cost[k]["post_audio_ms"] for k in ks)
            wf = statistics.mean(forwards_ms(wall[k]) for k in ks)
            cf = statistics.mean(forwards_ms(cost[k]) for k in ks)
            out[dec][kind] = {"units": len(ks), "wall_ms": round(w, 3), "cost_ms": round(c, 3),
                              "ratio": round(c / w, 4), "wall_forwards_ms": round(wf, 3),
                              "cost_forwards_ms": round(cf, 3), "forwards_ratio": round(cf / wf, 4)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wall", type=Path)
    ap.add_argument("cost", type=Path)
    ap.add_argument("--json", action="store_true", help="print the comparison as one JSON line")
    args = ap.parse_args()
    wall, cost = units_by_key(args.wall), units_by_key(args.cost)
    res = compare(wall, cost)
    if args.json:
        print(json.dumps(res))
        return
    print(f"{'decoder':8} {'kind':6} {'units':>6} {'wall ℓ':>8} {'cost ℓ':>8} {'cost/wall':>9} "
          f"{'wall fwd':>9} {'cost fwd':>9} {'cost/wall':>9}")
    for dec, kinds in res.items():
        for kind, r in kinds.items():
            print(f"{dec:8} {kind:6} {r['units']:>6} {r['wall_ms']:>8.2f} {r['cost_ms']:>8.2f} {r['ratio']:>9.3f} "
                  f"{r['wall_forwards_ms']:>9.2f} {r['cost_forwards_ms']:>9.2f} {r['forwards_ratio']:>9.3f}")


if __name__ == "__main__":
    main()
