"""A recipe's JSON, by file path or preset name (`presets/NAME.json`): shared by `train base` and
`train side-channel`."""

from __future__ import annotations

import json
from pathlib import Path


def read_config(name_or_path: str | Path, presets: Path) -> dict:
    """The JSON of the file `name_or_path`, else of the preset `presets/NAME.json`; a one-line error otherwise."""
    path = Path(name_or_path)
    if not path.is_file():
        path = presets / f"{name_or_path}.json"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in presets.glob("*.json")))
        raise ValueError(f"no recipe file or preset {str(name_or_path)!r}; presets: {known}")
    return json.loads(path.read_text())
