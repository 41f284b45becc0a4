"""Room impulse responses for the `Room` augmentation: a seeded bank simulated once with pyroomacoustics.

Simulating a room (image sources up to RT60 0.8 s) takes longer than rendering a session, so a bank of
`N_ROOMS` shoebox rooms (RT60 0.1-0.8 s, random size, source and microphone) is made once and saved as
`rooms.npz` in the data folder ($TICKTOCK_ROOMS names another file); training draws from it. Each response
starts at its direct path, so convolving keeps every word time.
"""

from __future__ import annotations

import os
import random
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..audio.io import SAMPLE_RATE

N_ROOMS = 96
RT60_S = (0.1, 0.8)


def rooms_path() -> Path:
    from .store import data_root

    return Path(os.environ.get("TICKTOCK_ROOMS") or data_root() / "rooms.npz")


def simulate_room(rng: random.Random) -> tuple[np.ndarray, float]:
    """(impulse response from its direct path (n,) float32, RT60 s) of one random shoebox room."""
    import pyroomacoustics as pra

    rt60 = rng.uniform(*RT60_S)
    while True:  # a room too large for a short RT60 has no absorption that gives it: draw another size
        dims = [rng.uniform(3, 10), rng.uniform(3, 8), rng.uniform(2.4, 4)]
        try:
            absorption, max_order = pra.inverse_sabine(rt60, dims)
            break
        except ValueError:
            continue
    room = pra.ShoeBox(dims, fs=SAMPLE_RATE, materials=pra.Material(absorption), max_order=min(max_order, 40))
    pos = lambda: [rng.uniform(0.5, d - 0.5) for d in dims]  # noqa: E731
    room.add_source(pos())
    room.add_microphone(pos())
    room.compute_rir()
    h = np.asarray(room.rir[0][0], dtype=np.float64)
    h = h[int(np.argmax(np.abs(h))):]  # the direct path at 0: no delay
    return (h / np.abs(h[0])).astype(np.float32), rt60


def make_rooms(path: Path, n: int = N_ROOMS, seed: int = 0) -> Path:
    rng = random.Random(f"rooms:{seed}")
    rirs, rt60s = zip(*(simulate_room(rng) for _ in range(n)))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, rt60=np.array(rt60s), **{f"h{i}": h.astype(np.float16) for i, h in enumerate(rirs)})
    return path


@lru_cache(maxsize=1)
def room_bank() -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """(impulse responses, their RT60s), made on first use if the bank file is missing."""
    path = rooms_path()
    if not path.exists():
        make_rooms(path)
    with np.load(path) as z:
        return tuple(z[f"h{i}"].astype(np.float32) for i in range(len(z["rt60"]))), z["rt60"]
