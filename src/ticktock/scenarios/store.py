"""Where rendered suites live on disk, rendered on first use."""

from __future__ import annotations

import os
from pathlib import Path

from .suites import load_manifest, write_suite


def data_root() -> Path:
    return Path(os.environ.get("TICKTOCK_DATA", Path.home() / ".cache" / "ticktock" / "data"))


def ensure_suite(suite: str, root: Path | None = None, n: int | None = None, progress: bool = True) -> tuple[Path, list[dict]]:
    """The suite's folder and manifest, rendering it first if it is not there (or is incomplete)."""
    folder = (root or data_root()) / (suite if n is None else f"{suite}-{n}")
    manifest = folder / "manifest.jsonl"
    entries = load_manifest(folder) if manifest.exists() else []
    if not entries or (n is not None and len(entries) != n):
        write_suite(suite, folder, n=n, progress=progress)
        entries = load_manifest(folder)
    return folder, entries
