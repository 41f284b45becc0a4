"""Merge the results folders of a benchmark run made in pieces (`ticktock bench --part K/M`) into one.

    python scripts/merge_bench.py OUT PART_DIR [PART_DIR ...] [--no-plots]

Each part holds config.json and units.jsonl (or units.jsonl.gz); the parts must share every setting
but the sessions and decoders (a unit two parts both ran counts once). The merged folder gets the union of the units, the summary recomputed over
them, and a config naming every session. Prints the summary's `--json` view as the last line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ticktock.bench.metrics import json_view, summarize
from ticktock.bench.report import read_units, write_results

SAME = ("clock", "suite", "temperature", "concurrent_sessions", "engine", "dtype", "model", "profile")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("parts", nargs="+")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    configs = [json.loads((Path(p) / "config.json").read_text()) for p in args.parts]
    for c in configs[1:]:
        differ = [k for k in SAME if c.get(k) != configs[0].get(k)]
        if differ:
            raise SystemExit(f"parts differ in {', '.join(differ)}: not one run")
    records, seen = [], set()
    for p in args.parts:  # a unit two parts both ran (e.g. `ar`, which every run includes) counts once
        for r in read_units(Path(p)):
            key = (r["session"], r["decoder"], r["unit"])
            if key not in seen:
                seen.add(key)
                records.append(r)
    config = dict(configs[0], parts=[c.get("args", {}).get("part") for c in configs],
                  session_ids=list(dict.fromkeys(i for c in configs for i in c.get("session_ids", []))),
                  decoders=list(dict.fromkeys(r["decoder"] for r in records)))
    config["sessions"] = len(config["session_ids"])
    summary = summarize(records, greedy=config.get("temperature", 0) <= 0, chunk_ms=config.get("chunk_ms", 1000.0))
    write_results(args.out, config, records, summary, plots=not args.no_plots)
    print(json.dumps({"suite": config["suite"], "clock": config["clock"], "sessions": config["sessions"],
                      "decoders": json_view(summary)}))


if __name__ == "__main__":
    main()
