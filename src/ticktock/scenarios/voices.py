"""espeak-ng voices: a TRAIN set and a disjoint HELD-OUT set (accents and timbres both unseen).

A voice is `base+variant` (e.g. `en-us+m3`) with a rate (words per minute) and pitch (0-99)
drawn per session. Held-out bases and variants never occur in the training set.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

TRAIN_BASES = ("en-us", "en", "en-gb-scotland", "en-029", "en-gb-x-gbcwmd")
TRAIN_VARIANTS = ("m1", "m2", "m3", "m4", "m5", "f1", "f2", "f3", "klatt", "klatt2", "Andy",
                  "Alicia", "david", "edward", "linda", "john")
HELDOUT_BASES = ("en-gb-x-rp", "en-us-nyc", "en-gb-x-gbclan")
HELDOUT_VARIANTS = ("m6", "m7", "f4", "f5", "klatt3", "Mike", "steph", "benjamin")
RATE = (140, 190)  # words per minute
PITCH = (30, 70)

TRAIN_VOICES = tuple(f"{b}+{v}" for b in TRAIN_BASES for v in TRAIN_VARIANTS)
HELDOUT_VOICES = tuple(f"{b}+{v}" for b in HELDOUT_BASES for v in HELDOUT_VARIANTS)
SPLITS = {"train": TRAIN_VOICES, "heldout": HELDOUT_VOICES}


@dataclass(frozen=True)
class Voice:
    name: str  # espeak-ng -v argument
    rate: int = 170  # -s, words per minute
    pitch: int = 50  # -p, 0-99

    def to_dict(self) -> dict:
        return asdict(self)


def split_of(name: str) -> str:
    """'train' or 'heldout' for a voice name in either set."""
    for split, names in SPLITS.items():
        if name in names:
            return split
    raise KeyError(f"voice {name!r} is in no split")


def draw_voice(rng: random.Random, split: str = "train", exclude: str | None = None) -> Voice:
    """A random voice of `split` ('train' | 'heldout') with rate and pitch drawn per session."""
    names = [n for n in SPLITS[split] if n != exclude]
    return Voice(rng.choice(names), rng.randint(*RATE), rng.randint(*PITCH))
