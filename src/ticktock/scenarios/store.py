"""Where rendered suites live on disk, rendered on first use."""

from __future__ import annotations

import fcntl
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .render import RENDERING
from .suites import SUITES, DamagedManifest, load_manifest, make_scripts, write_suite


def data_root() -> Path:
    return Path(os.environ.get("TICKTOCK_DATA", Path.home() / ".cache" / "ticktock" / "data"))


def ensure_suite(suite: str, root: Path | None = None, n: int | None = None, progress: bool = True) -> tuple[Path, list[dict]]:
    """The suite's folder and manifest, rendering it first if it is not there, was rendered from
    scripts the generator no longer writes or rendered otherwise (a cache from an older ticktock: its
    `rendering` stamp is not `RENDERING`). A cache that holds the first sessions of a suite grown since
    (sessions appended) renders only the new ones."""
    folder = (root or data_root()) / (suite if n is None else f"{suite}-{n}")
    want = n if n is not None else SUITES[suite].n
    if want is None:
        raise ValueError(f"suite {suite!r} is unbounded: pass n")
    with suite_lock(folder):  # two commands started at once render the suite once, one after the other
        entries = _cached_entries(folder)
        if rendering_of(folder) != RENDERING or len(entries) > want or is_stale(suite, entries):  # cheapest first
            entries = []
        if len(entries) < want:
            write_suite(suite, folder, n=want, progress=progress, kept=entries)
            entries = load_manifest(folder)
    return folder, entries


def rendering_of(folder: Path) -> int | None:
    """The `RENDERING` a suite folder was rendered with (None: before stamps, or not rendered)."""
    try:
        return int((folder / "rendering").read_text())
    except (FileNotFoundError, ValueError):
        return None


def _cached_entries(folder: Path) -> list[dict]:
    """The folder's rendered entries; of a damaged manifest, the whole entries before the damage (the rest is
    rendered again)."""
    if not (folder / "manifest.jsonl").exists():
        return []
    try:
        return load_manifest(folder)
    except DamagedManifest as e:
        print(f"ticktock: {e}; rendering the rest again", file=sys.stderr)
        return e.entries


@contextmanager
def suite_lock(folder: Path) -> Iterator[None]:
    """Hold the suite folder's exclusive lock (`folder/.lock`) for the block: one render at a time; waits."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def is_stale(suite: str, entries: list[dict]) -> bool:
    """Do rendered entries differ from what the suite's scripts say now (ids, words, tool calls, recall)?

    Rendering moves utterance times, so only what the generator alone decides is compared; writing the
    scripts takes well under a second even for `full`."""
    def key(d: dict) -> tuple:
        calls = [u["content"] for u in d.get("units", []) if u.get("decision") == "tool"]
        return d.get("id"), [u["text"] for u in d.get("utterances", [])], calls, d.get("recall", [])

    return [key(e) for e in entries] != [key(s.to_dict()) for s in make_scripts(suite, len(entries))]
