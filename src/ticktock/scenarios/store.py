"""Where rendered suites live on disk, rendered on first use."""

from __future__ import annotations

import os
from pathlib import Path

from .suites import SUITES, load_manifest, make_scripts, write_suite


def data_root() -> Path:
    return Path(os.environ.get("TICKTOCK_DATA", Path.home() / ".cache" / "ticktock" / "data"))


def ensure_suite(suite: str, root: Path | None = None, n: int | None = None, progress: bool = True) -> tuple[Path, list[dict]]:
    """The suite's folder and manifest, rendering it first if it is not there or was rendered from
    scripts the generator no longer writes (a cache from an older ticktock). A cache that holds the
    first sessions of a suite grown since (sessions appended) renders only the new ones."""
    folder = (root or data_root()) / (suite if n is None else f"{suite}-{n}")
    manifest = folder / "manifest.jsonl"
    want = n if n is not None else SUITES[suite].n
    if want is None:
        raise ValueError(f"suite {suite!r} is unbounded: pass n")
    entries = load_manifest(folder) if manifest.exists() else []
    if len(entries) > want or is_stale(suite, entries):
        entries = []
    if len(entries) < want:
        write_suite(suite, folder, n=want, progress=progress, start=len(entries))
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
