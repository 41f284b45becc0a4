"""Which unit transcribes each user word: the side channel's δ rule (docs/design.md §4).

A word is transcribed once `EMISSION_DELAY_S` of audio past its end has arrived. Training targets
(`train.side_channel`) and the oracle transcripts of `ticktock memory` both follow it.
"""

from __future__ import annotations

import math

EMISSION_DELAY_S = 0.5  # δ: a word is transcribed once this much audio after its end has arrived


def word_unit(end_s: float, chunk_s: float = 1.0, delay_s: float = EMISSION_DELAY_S) -> int:
    """The 0-based unit that transcribes a word ending at `end_s`: the paper's k = ceil((e + δ)/Δ), 1-based.

    Unit t holds the audio [tΔ, (t+1)Δ), so unit k−1 is the first to have heard δ past the word's end.
    """
    return max(0, math.ceil(round((end_s + delay_s) / chunk_s, 9)) - 1)


def word_units(words: list[dict], n_units: int, chunk_s: float = 1.0, delay_s: float = EMISSION_DELAY_S) -> list[str]:
    """Side-channel words: per unit, the user words assigned to it by `word_unit` ('' if none).

    Each user word lands in exactly one unit; words past the session's end go to its last unit.
    """
    per_unit: list[list[str]] = [[] for _ in range(n_units)]
    for w in words:
        if w.get("speaker", "user") == "user":
            per_unit[min(n_units - 1, word_unit(w["end"], chunk_s, delay_s))].append(w["word"])
    return [" ".join(ws) for ws in per_unit]
