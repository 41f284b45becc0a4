"""Voices of every engine: espeak-ng's TRAIN and disjoint HELD-OUT sets, festival's, SAM's, flite's.

An espeak-ng voice is `base+variant` (e.g. `en-us+m3`) with a rate (words per minute) and pitch (0-99)
drawn per session. Held-out bases and variants never occur in the training set. Another engine's voice is
named `engine/voice` (`festival/ked_diphone`); its rate is drawn the same way, its pitch is left to the
augmentation (`augment`).

festival's voices in Debian, by origin: the English ones are CMU's. `kal_diphone` (festvox-kallpc16k) and
`cmu_us_slt_arctic_hts` (ARCTIC) and every flite voice (ARCTIC and kal) are the outside check and never
train. `ked_diphone` (festvox-kdlpc16k, a 1997 CMU diphone voice, not ARCTIC) is the one English festival voice
training may hear, so it trains; `heldout-festival-kdl` still renders `heldout`'s scripts with it. kdl's English
front end also speaks through the Italian and Finnish voices' diphones (`english_pc_diphone`, `english_lp_diphone`,
`english_hy_fi_mv_diphone`: `festival_english.py`). The rest read English with another language's front end (Catalan ona, an HTS voice;
Finnish, Italian and Czech diphone voices). festival's Hindi and Russian voices cannot read Latin text and are
not used. Two more engines train where installed (Debian contrib and non-free): MBROLA's recorded diphones through
espeak-ng's front end (`mb-us1` …, espeak-ng voices: `scenarios/mbrola.py`) and SVOX Pico (`pico/en-US`,
`pico/en-GB`: `scenarios/pico.py`). SAM (`scenarios/sam.py`, a formant synthesizer of another lineage than
espeak-ng's) is the own held-out engine: no SAM voice trains (`heldout-sam`).
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
FESTIVAL_KDL = ("festival/ked_diphone",)
FESTIVAL_TRAIN_VOICES = (*FESTIVAL_KDL, *(f"festival/{v}" for v in (
    "english_pc_diphone", "english_lp_diphone", "english_hy_fi_mv_diphone", "upc_ca_ona_hts", "hy_fi_mv_diphone",
    "suo_fi_lj_diphone", "pc_diphone", "lp_diphone", "czech_dita", "czech_machac")))
MBROLA_TRAIN_VOICES = ("mb-us1", "mb-us2", "mb-us3", "mb-en1")  # espeak-ng voices over MBROLA's databases
PICO_TRAIN_VOICES = ("pico/en-US", "pico/en-GB")
SAM_HELDOUT_VOICES = ("sam/sam", "sam/elf", "sam/stuffy", "sam/old-lady")  # scenarios/sam.py's PRESETS
OUTSIDE_VOICES = ("festival/kal_diphone", "festival/cmu_us_slt_arctic_hts",
                  *(f"flite/{v}" for v in ("slt", "rms", "awb", "kal16", "kal")))
# a voice in two splits belongs to the first (`split_of`): kdl's suite draws its background talker from kdl alone
SPLITS = {"train": TRAIN_VOICES, "heldout": HELDOUT_VOICES, "festival-kdl": FESTIVAL_KDL,
          "festival-train": FESTIVAL_TRAIN_VOICES, "mbrola-train": MBROLA_TRAIN_VOICES,
          "pico-train": PICO_TRAIN_VOICES, "sam": SAM_HELDOUT_VOICES, "flite": OUTSIDE_VOICES[2:]}


@dataclass(frozen=True)
class Voice:
    name: str  # espeak-ng -v argument
    rate: int = 170  # -s, words per minute
    pitch: int = 50  # -p, 0-99

    def to_dict(self) -> dict:
        return asdict(self)


def engine_of(name: str) -> str:
    """'espeak' (MBROLA's voices too), 'festival', 'pico', 'sam' or 'flite': the engine a voice name belongs to."""
    return name.split("/", 1)[0] if "/" in name else "espeak"


def engine_voice(name: str) -> str:
    """The engine's own name of a voice ('festival/ked_diphone' -> 'ked_diphone')."""
    return name.split("/", 1)[-1]


def split_of(name: str) -> str:
    """'train' or 'heldout' for a voice name in either set."""
    for split, names in SPLITS.items():
        if name in names:
            return split
    raise KeyError(f"voice {name!r} is in no split")


def draw_voice(rng: random.Random, split: str = "train", exclude: str | None = None) -> Voice:
    """A random voice of `split` (a key of SPLITS) with rate and pitch drawn per session; a split of one
    voice lends it to the background talker too."""
    names = [n for n in SPLITS[split] if n != exclude] or list(SPLITS[split])
    name, rate = rng.choice(names), rng.randint(*RATE)
    return Voice(name, rate, rng.randint(*PITCH) if engine_of(name) == "espeak" else 50)
