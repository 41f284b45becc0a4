"""Where rendered suites live on disk, rendered on first use."""

from __future__ import annotations

import os
from pathlib import Path

from .suites import load_manifest, make_scripts, write_suite


def data_root() -> Path:
    return Path(os.environ.get("TICKTOCK_DATA", Path.home() / ".cache" / "ticktock" / "data"))


def ensure_suite(suite: str, root: Path | None = None, n: int | None = None, progress: bool = True) -> tuple[Path, list[dict]]:
    """The suite's folder and manifest, rendering it first if it is not there, is incomplete, or was
    rendered from scripts the generator no longer writes (a cache from an older ticktock)."""
    folder = (root or data_root()) / (suite if n is None else f"{suite}-{n}")
    manifest = folder / "manifest.jsonl"
    entries = load_manifest(folder) if manifest.exists() else []
    if not entries or (n is not None and len(entries) != n) or is_stale(suite, entries):
        write_suite(suite, folder, n=n, progress=progress)
        entries = load_manifest(folder)
    return folder, entries


def is_stale(suite: str, entries: list[dict]) -> bool:
    """Do rendered entries differ from what the suite's scripts say now (ids, words, tool calls, recall)?

    Rendering moves utterance times, so only what the generator alone decides is compared; writing the
    scripts takes well under a second even for `full`."""
    def key(d: dict) -> tuple:
        calls = [u["content"] for u in d.get("units", []) if u.get("decision") == "tool"]
        return d.get("id"), [u["text"] for u in d.get("utterances", [])], calls, d.get("recall", [])

    return [key(e) for e in entries] != [key(s.to_dict()) for s in make_scripts(suite, len(entries))]
