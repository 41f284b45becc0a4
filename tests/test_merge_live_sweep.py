"""scripts/merge_live_sweep.py: live runs made in pieces become one sweep; an N in two runs needs --later-wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run_folder(path: Path, n: int, miss: float, hardware: str = "NVIDIA H200") -> Path:
    path.mkdir(parents=True)
    cfg = {"args": {"live": "batched", "seconds": 40.0}, "concurrent_sessions": n, "clock": "wall", "suite": "live",
           "temperature": 0.0, "engine": "fast", "dtype": "bfloat16", "model": "m", "decoders": ["ar", "sl"],
           "hardware": hardware}
    (path / "config.json").write_text(json.dumps(cfg))
    point = {"latency_ms_p50": 10.0, "latency_ms_p99": 50.0, "deadline_miss_rate": miss, "lagging_sessions": 0.0,
             "max_lag_ms_max": 0.0, "lossless": 1.0, "device_mb_per_session": 100.0}
    (path / "summary.json").write_text(json.dumps({"ar": point, "sl": dict(point, speak_speedup=2.0)}))
    return path


def _merge(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "merge_live_sweep.py"), *args, "--no-plots"],
                          capture_output=True, text=True, env=env)


def test_a_point_measured_again_replaces_the_earlier_one_only_when_asked(tmp_path):
    old = _run_folder(tmp_path / "old", 4, miss=0.25)
    new = _run_folder(tmp_path / "new", 4, miss=0.0)
    other = _run_folder(tmp_path / "other", 8, miss=0.0)
    out = tmp_path / "out"
    refused = _merge(str(out), str(old), str(new), str(other))
    assert refused.returncode != 0 and "N = 4 is in two runs" in refused.stderr
    done = _merge(str(out), str(old), str(new), str(other), "--later-wins")
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert line["sessions"]["4"]["ar"]["deadline_miss_rate"] == 0.0  # the later run's point
    assert line["capacity"] == {"ar": 8, "sl": 8}
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["point_from"] == {"4": "new", "8": "other"} and cfg["runs"][0] == os.path.join("..", "old")
    assert "`old` (N = none kept)" in (out / "report.md").read_text()


def test_runs_on_different_cards_are_not_one_sweep(tmp_path):
    h200 = _run_folder(tmp_path / "h200", 4, miss=0.0)
    h100 = _run_folder(tmp_path / "h100", 8, miss=0.0, hardware="NVIDIA H100 80GB HBM3")
    refused = _merge(str(tmp_path / "out"), str(h200), str(h100))
    assert refused.returncode != 0 and "runs differ in hardware" in refused.stderr
