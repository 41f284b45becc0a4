"""scripts/replot_results.py: the plots a fetched run's report links but lacks are drawn from the folder's own files."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_bench import hand_records

from ticktock.bench.metrics import summarize
from ticktock.bench.report import write_results

ROOT = Path(__file__).resolve().parents[1]


def test_missing_plots_are_drawn_again_from_the_run_files(tmp_path):
    pytest.importorskip("matplotlib")
    records = hand_records()
    out = write_results(tmp_path / "run", {"suite": "syn", "clock": "wall"}, records, summarize(records))
    linked = sorted(p.name for p in out.glob("*.png"))
    assert "forwards_by_length.png" in linked
    for p in out.glob("*.png"):  # what a device machine's files come back without
        p.unlink()
    units = out / "units.jsonl"  # fetched runs keep their units gzipped
    (out / "units.jsonl.gz").write_bytes(gzip.compress(units.read_bytes()))
    units.unlink()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "replot_results.py"), str(out)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.glob("*.png")) == linked
    again = subprocess.run([sys.executable, str(ROOT / "scripts" / "replot_results.py"), str(out)],
                           capture_output=True, text=True, env=env)
    assert again.returncode == 0 and again.stdout == ""  # nothing missing: nothing drawn
