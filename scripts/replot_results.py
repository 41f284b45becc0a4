"""Draw the plots a results folder's report.md links but lacks (a run fetched from a device machine, whose files
come back without them), from the folder's own config.json, summary.json, units.jsonl(.gz) and sweeps.json.

    python scripts/replot_results.py FOLDER [FOLDER ...]

Prints each plot drawn; a folder whose report links no missing plot is left as it is.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from ticktock.bench.report import draw_plots, read_units


def replot(folder: Path) -> list[str]:
    """The plots of `folder`'s run, drawn again if its report.md links one it lacks; returns the names drawn."""
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", (folder / "report.md").read_text())
    if all((folder / name).exists() for name in linked):
        return []
    sweeps = folder / "sweeps.json"
    return draw_plots(folder, json.loads((folder / "config.json").read_text()), read_units(folder),
                      json.loads((folder / "summary.json").read_text()),
                      json.loads(sweeps.read_text()) if sweeps.exists() else None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    for folder in ap.parse_args().folders:
        for name in replot(folder):
            print(folder / name)


if __name__ == "__main__":
    main()
