"""The session log: one JSON object per line, written and flushed as each event happens.

A unit is in the log before it is sent to the client, so a disconnect (or a
server crash) loses nothing already computed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path


class SessionLog:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "a", encoding="utf-8")

    def write(self, record: dict) -> None:
        if self._f.closed:
            return
        self._f.write(json.dumps({"t": round(time.time(), 3), **record}) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def read_log(path: str | Path) -> list[dict]:
    """The records of a session log (a torn last line, from a crash mid-write, is skipped)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out
