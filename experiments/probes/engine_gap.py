"""Which acoustic difference keeps an engine unheard? Transcription WER (`listen_probe`) of a rendered suite under
length-keeping transforms of each session's audio, beside the voice's pitch (median and spread of WORLD's F0).

If moving the unheard engine's pitch, spectral envelope or band toward the trained voices' brings its WER down, the
gap is acoustic and a training augmentation of that kind is the lever; if nothing moves it, the gap is in what is
said (the engine's own letter-to-sound rules and timing), which only other engines' speech teaches.
Usage: python experiments/probes/engine_gap.py MODEL_DIR N SUITE [SUITE ...]   (e.g. heldout-sam heldout)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from listen_probe import main as listen_wer, sessions  # noqa: E402
from ticktock.audio.io import SAMPLE_RATE  # noqa: E402
from ticktock.scenarios.effects import BandLimit, World  # noqa: E402


def world(f0: float = 1.0, warp: float = 0.0) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: World().apply(x, {"f0": f0, "warp": warp})


def telephone(x: np.ndarray) -> np.ndarray:
    return BandLimit().apply(x, {"cutoff_hz": 3400.0}, None)


TRANSFORMS: dict[str, Callable[[np.ndarray], np.ndarray] | None] = {
    "none": None, "world": world(), "f0x0.75": world(f0=0.75), "f0x1.33": world(f0=1.33),
    "warp-0.1": world(warp=-0.1), "warp+0.1": world(warp=0.1), "telephone": telephone,
}


def pitch(suite: str, n: int) -> dict:
    """Median voiced F0 (Hz) and its spread (semitones, 10th-90th percentile) over n sessions."""
    import pyworld as pw

    f0 = np.concatenate([pw.dio(audio.astype(np.float64), SAMPLE_RATE)[0]
                         for audio, _, _ in sessions(f"suite:{suite}", n)])
    f0 = f0[f0 > 0]
    lo, med, hi = np.percentile(f0, [10, 50, 90])
    return {"f0_median_hz": round(float(med), 1), "f0_spread_semitones": round(float(12 * np.log2(hi / lo)), 1)}


if __name__ == "__main__":
    model, n, suites = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    for suite in suites:
        print(json.dumps({"suite": suite, **pitch(suite, n)}), flush=True)
        for name, fn in TRANSFORMS.items():
            wer = listen_wer(model, f"suite:{suite}", n, transform=fn, quiet=True)
            print(json.dumps({"suite": suite, "transform": name, "wer": round(wer, 3)}), flush=True)
