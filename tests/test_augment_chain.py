"""The training augmentation chain: every effect keeps the length / word-time contract."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ticktock.audio.io import SAMPLE_RATE
from ticktock.scenarios import espeak_available
from ticktock.scenarios.augment import CLEAN, Chain, training_chain
from ticktock.scenarios.effects import BandLimit, Codec, Gain, Mix, Noise, Pitch, Room, Tempo, World, wsola
from ticktock.scenarios.engines import Engines
from ticktock.scenarios.render import render_session
from ticktock.scenarios.suites import script_at
from ticktock.scenarios.voices import Voice

pyworld = pytest.importorskip("pyworld", reason="pyworld not installed")


def _speechlike(n: int = 12000, seed: int = 0) -> np.ndarray:
    t = np.arange(n) / SAMPLE_RATE
    gen = np.random.default_rng(seed)
    return (0.3 * np.sin(2 * np.pi * 140 * t) * np.sin(2 * np.pi * 3 * t) + 0.01 * gen.standard_normal(n)).astype(np.float32)


@pytest.fixture(scope="module")
def small_rooms(tmp_path_factory):
    """A bank of 2 rooms (pyroomacoustics) instead of the full one."""
    pytest.importorskip("pyroomacoustics")
    import os

    from ticktock.scenarios import rooms

    path = tmp_path_factory.mktemp("rooms") / "rooms.npz"
    rooms.make_rooms(path, n=2)
    os.environ["TICKTOCK_ROOMS"] = str(path)
    rooms.room_bank.cache_clear()
    yield path
    del os.environ["TICKTOCK_ROOMS"]
    rooms.room_bank.cache_clear()


@pytest.mark.parametrize("fx", [Room(p=1), BandLimit(p=1), Codec(p=1, kinds=("mulaw",)), Codec(p=1, kinds=("8k",)),
                                Noise(p=1, babble_share=1.0), Noise(p=1, babble_share=0.0), Gain()])
def test_channel_effects_keep_length(fx, small_rooms) -> None:
    x = _speechlike()
    y = fx.apply(x, fx.draw(random.Random(1)), Mix(0.1, [x[:3000], x[5000:6000]]))
    assert y.shape == x.shape and y.dtype == np.float32 and np.isfinite(y).all()


@pytest.mark.parametrize("fx", [World(p=1), Pitch(p=1)])
def test_voice_effects_keep_duration(fx) -> None:
    x = _speechlike()
    y = fx.apply(x, fx.draw(random.Random(2)))
    assert abs(len(y) - len(x)) <= 2 and np.isfinite(y).all()


@pytest.mark.parametrize("rate", [0.85, 1.0, 1.2])
def test_tempo_scales_duration_exactly(rate: float) -> None:
    x = _speechlike()
    assert len(wsola(x, rate)) == round(len(x) / rate)
    assert len(Tempo(p=1).apply(x, {"rate": rate})) == round(len(x) / rate)


def test_effects_draw_within_their_ranges() -> None:
    rng = random.Random(0)
    for _ in range(200):
        assert 0.7 <= World(p=1).draw(rng)["f0"] <= 1.4
        assert -3 <= Pitch(p=1).draw(rng)["semitones"] <= 3
        assert 5 <= Noise(p=1).draw(rng)["snr_db"] <= 30
        assert -20 <= Gain().draw(rng)["db"] <= 6
    assert Chain().draw(rng) == ([], [])


@pytest.mark.skipif(not espeak_available(), reason="espeak-ng not installed")
def test_chain_keeps_the_session_contract(small_rooms) -> None:
    """With every effect on, the audio spans the units and every word's time is its clip's (voice effects act
    before the layout)."""
    chain = training_chain()
    chain = Chain(voice=tuple(type(fx)(p=1) for fx in chain.voice), channel=tuple(type(fx)(p=1) for fx in chain.channel))
    r = render_session(script_at("quick", 1), Voice("en-us+m3"), random.Random(3), Engines(), CLEAN, chain=chain)
    assert len(r.audio) == r.script.n_units * SAMPLE_RATE
    assert [name for name, _ in r.voice["chain"]["main"]] == ["World", "Tempo", "Pitch", "Room", "Noise",
                                                              "BandLimit", "Codec", "Gain"]
    ends = [w["end"] for w in r.words]
    assert max(ends) <= len(r.audio) / SAMPLE_RATE and all(w["end"] > w["start"] for w in r.words)
