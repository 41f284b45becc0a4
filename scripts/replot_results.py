"""Draw the plots a results folder's report.md links but lacks (a run fetched from a device machine, whose files
come back without them), from the folder's own config.json, summary.json, units.jsonl(.gz) and sweeps.json.

    python scripts/replot_results.py FOLDER [FOLDER ...]

Prints each plot drawn; a folder whose report links no missing plot is left as it is.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path

from ticktock.bench.report import plot_capacity, plot_forwards, plot_sweep, plot_timeline


def units(folder: Path) -> list[dict]:
    plain, packed = folder / "units.jsonl", folder / "units.jsonl.gz"
    if plain.exists():
        lines = plain.read_text().splitlines()
    elif packed.exists():
        lines = gzip.open(packed, "rt").read().splitlines()
    else:
        raise SystemExit(f"{folder}: no units.jsonl(.gz)")
    return [json.loads(line) for line in lines if line.strip()]


def replot(folder: Path) -> list[str]:
    """The missing plots of `folder`'s report.md, drawn; returns their names."""
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", (folder / "report.md").read_text())
    missing = [name for name in linked if not (folder / name).exists()]
    if not missing:
        return []
    config = json.loads((folder / "config.json").read_text())
    summary = json.loads((folder / "summary.json").read_text())
    sweeps = json.loads((folder / "sweeps.json").read_text()) if (folder / "sweeps.json").exists() else {}
    chunk_ms = float(config.get("chunk_ms", 1000.0))
    drawn = []
    for name in missing:
        path = folder / name
        if name == "timeline.png":
            made = plot_timeline(units(folder), path, chunk_ms=chunk_ms)
        elif name == "forwards_by_length.png":
            made = plot_forwards(summary, path)
        elif name == "latency_vs_sessions.png":
            made = plot_capacity(sweeps["sessions"], path, chunk_ms)
        elif name.startswith("speedup_vs_"):
            axis = name[len("speedup_vs_"):-len(".png")]
            made = plot_sweep(sweeps[axis], axis, path)
        else:
            raise SystemExit(f"{folder}: report links {name}, which this script does not draw")
        if made:
            drawn.append(name)
    return drawn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    for folder in ap.parse_args().folders:
        for name in replot(folder):
            print(folder / name)


if __name__ == "__main__":
    main()
