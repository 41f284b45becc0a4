"""Where a live run's speak latency goes, by decoder: the audio front, the forwards, and the rest (waiting for a
round, host work), from a `bench --live` units file (the columns `encoder_ms`, `forward_ms`, `latency_ms`).

    python experiments/probes/speak_breakdown.py N=UNITS.jsonl[.gz] ...

Speak units are those `ar` decided to speak (as `speak ×` counts them, `bench.metrics`); every figure is a mean
over them, so `ar`'s ℓ over `sl`'s is the run's `speak ×`.
"""

from __future__ import annotations

import gzip
import json
import sys
from statistics import mean


def read_units(path: str) -> list[dict]:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return [json.loads(line) for line in f]


def breakdown(units: list[dict]) -> dict[str, dict[str, float]]:
    """decoder -> mean ℓ, audio front, forwards, their count, ms per forward and the rest over `ar`'s speak units."""
    speak = {(u["session"], u["unit"]) for u in units if u["decoder"] == "ar" and u["decision"] == "speak"}
    out = {}
    for dec in sorted({u["decoder"] for u in units}):
        rows = [u for u in units if u["decoder"] == dec and (u["session"], u["unit"]) in speak]
        fwd = [sum(u["forward_ms"]) for u in rows]
        out[dec] = {"units": len(rows), "latency": mean(u["latency_ms"] for u in rows),
                    "front": mean(u["encoder_ms"] for u in rows), "forwards_ms": mean(fwd),
                    "forwards": mean(u["forwards"] for u in rows),
                    "per_forward": sum(fwd) / sum(u["forwards"] for u in rows)}
        out[dec]["rest"] = out[dec]["latency"] - out[dec]["front"] - out[dec]["forwards_ms"]
    return out


def main(args: list[str]) -> None:
    print("| N | decoder | speak units | ℓ mean ms | audio front | forwards (ms) | forwards | ms / forward | rest |")
    print("|---|---|---|---|---|---|---|---|---|")
    for arg in args:
        n, _, path = arg.partition("=")
        for dec, b in breakdown(read_units(path)).items():
            print(f"| {n} | {dec} | {b['units']} | {b['latency']:.1f} | {b['front']:.2f} | {b['forwards_ms']:.1f} | "
                  f"{b['forwards']:.1f} | {b['per_forward']:.2f} | {b['rest']:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__))
