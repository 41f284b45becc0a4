"""How the commands' rich tables show a number."""

from __future__ import annotations


def cell(x) -> str:
    """None -> '–'; floats to 3 significant digits (whole numbers from 100 up); anything else as str."""
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"
    return str(x)
