"""Merge live runs made in pieces (`ticktock bench --live MODE --sessions N[,N...]`, one process each) into one sweep.

    python scripts/merge_live_sweep.py OUT RUN_DIR [RUN_DIR ...] [--later-wins] [--no-plots]

Each run folder holds config.json and either sweeps.json (several N) or summary.json (one N); the runs must
share every setting but the sessions, the card that ran them too (config `hardware`). OUT gets sweeps.json,
report.md (speedups, ℓ p50 / p99, misses, lagging, GPU memory per N, the capacity per decoder), the plots and
config.json (the runs' configs). Prints a JSON line.
An N in two runs is an error, unless --later-wins: then the later run's point replaces the earlier one (a point
measured again), and the report says which run each N comes from.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from ticktock.bench.report import capacity, plot_capacity, plot_sweep, sweep_markdown

SAME = ("clock", "suite", "temperature", "engine", "dtype", "model", "decoders", "hardware")
KEYS = ("speak_speedup", "tool_speedup", "latency_ms_p50", "latency_ms_p99", "deadline_miss_rate", "lagging_sessions",
        "max_lag_ms_max", "lossless", "device_mb_per_session")


def run_points(folder: Path) -> dict[str, dict]:
    """N -> the run's summary at N."""
    cfg = json.loads((folder / "config.json").read_text())
    if not cfg["args"].get("live"):
        raise SystemExit(f"{folder}: not a live run (bench --live)")
    sweeps = folder / "sweeps.json"
    if sweeps.exists():
        return json.loads(sweeps.read_text())["sessions"]
    return {str(cfg["concurrent_sessions"]): json.loads((folder / "summary.json").read_text())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--later-wins", action="store_true", help="an N measured again replaces the earlier point")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    folders = [Path(r) for r in args.runs]
    configs = [json.loads((f / "config.json").read_text()) for f in folders]
    for c in configs[1:]:
        differ = [k for k in SAME if c.get(k) != configs[0].get(k)]
        if differ:
            raise SystemExit(f"runs differ in {', '.join(differ)}: not one sweep")
    sweep: dict[str, dict] = {}
    source: dict[str, str] = {}
    for f in folders:
        for n, summary in run_points(f).items():
            if n in sweep and not args.later_wins:
                raise SystemExit(f"N = {n} is in two runs (--later-wins keeps the later one)")
            sweep[n], source[n] = summary, f.name
    order = sorted(sweep, key=int)
    sweep = {n: sweep[n] for n in order}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps({"runs": [os.path.relpath(f, out) for f in folders], "configs": configs,
                                                 "point_from": {n: source[n] for n in order}}, indent=1) + "\n")
    (out / "sweeps.json").write_text(json.dumps({"sessions": sweep}, indent=1) + "\n")
    c = configs[0]
    names = []
    if not args.no_plots:
        names = [plot_sweep(sweep, "sessions", out / "speedup_vs_sessions.png"),
                 plot_capacity(sweep, out / "latency_vs_sessions.png", float(c.get("chunk_ms", 1000.0)))]
    head = (f"# ticktock bench --live {c['args']['live']} · {c['suite']} · model `{c['model']}` · {c['engine']} engine · "
            f"{c['dtype']} · {c['args'].get('seconds')} s of audio per session · {c.get('hardware', 'card not recorded')}"
            "\n\nRuns: "
            + ", ".join(f"`{f.name}` (N = {', '.join(n for n in order if source[n] == f.name) or 'none kept'})"
                        for f in folders) + "\n")
    plots = "".join(f"\n![{n}]({n})\n" for n in names)
    (out / "report.md").write_text(head + sweep_markdown({"sessions": sweep}) + plots)
    decoders = list(next(iter(sweep.values())))
    print(json.dumps({"sessions": {n: {d: {k: m[d].get(k) for k in KEYS} for d in decoders} for n, m in sweep.items()},
                      "capacity": {d: capacity(sweep, d) for d in decoders}}))


if __name__ == "__main__":
    main()
