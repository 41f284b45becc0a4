"""Where a speech engine's program is: its environment variable (an unpacked copy, e.g. on a GPU machine), else PATH."""

from __future__ import annotations

import os
import shutil


def engine_binary(env: str, name: str) -> str | None:
    """$`env`, else `name` on PATH; None unless that is a file."""
    binary = os.environ.get(env) or shutil.which(name)
    return binary if binary and os.path.isfile(binary) else None
