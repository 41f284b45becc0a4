"""Audio augmentation: coloured noise at a drawn SNR and a random overall gain (every suite), and the
training renderings' chain of effects (`Chain`, `effects`)."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

import numpy as np

NOISE_EXPONENT = {"white": 0.0, "pink": 1.0, "brown": 2.0}  # power spectrum ~ 1 / f^exponent


@dataclass(frozen=True)
class Augment:
    """Per-session augmentation drawn at render time."""

    noise_prob: float = 0.7  # chance of a continuous noise floor
    snr_db: tuple[float, float] = (10.0, 40.0)
    colors: tuple[str, ...] = ("white", "pink", "brown")
    gain_db: tuple[float, float] = (-12.0, 3.0)

    def to_dict(self) -> dict:
        return asdict(self)


CLEAN = Augment(noise_prob=0.0, gain_db=(0.0, 0.0))


def colored_noise(n: int, color: str, gen: np.random.Generator) -> np.ndarray:
    """Unit-RMS noise (n,) whose power falls as 1/f^k (white k=0, pink 1, brown 2)."""
    if n <= 0:
        return np.zeros(0, dtype=np.float32)
    spec = np.fft.rfft(gen.standard_normal(n))
    f = np.arange(len(spec), dtype=np.float64)
    f[0] = 1.0
    spec /= f ** (NOISE_EXPONENT[color] / 2)
    y = np.fft.irfft(spec, n)
    return (y / (np.sqrt(np.mean(y**2)) + 1e-12)).astype(np.float32)


def add_noise(audio: np.ndarray, start: int, end: int, color: str, snr_db: float, speech_rms: float,
              gen: np.random.Generator, fade: int = 320) -> None:
    """Add noise in place to audio[start:end] at `snr_db` below `speech_rms`, with short fades."""
    start, end = max(0, start), min(len(audio), end)
    n = end - start
    if n <= 0:
        return
    noise = colored_noise(n, color, gen) * speech_rms * 10 ** (-snr_db / 20)
    ramp = np.minimum(1.0, np.minimum(np.arange(n) + 1, np.arange(n)[::-1] + 1) / fade)
    audio[start:end] += noise * ramp.astype(np.float32)


@dataclass(frozen=True)
class Chain:
    """The training renderings' augmentation (`effects`): one seeded draw per session. Voice effects act on
    each voice's word clips before the layout, channel effects on the mixed session after the noise floor
    and gain of `Augment`."""

    voice: tuple = ()  # World, Tempo, Pitch
    channel: tuple = ()  # Room, Noise, BandLimit, Codec, Gain

    def draw(self, rng: random.Random) -> tuple[list, list]:
        """(voice effects, channel effects) with their parameters for one session: [(effect, params)]."""
        pick = lambda fxs: [(fx, p) for fx in fxs if (p := fx.draw(rng)) is not None]  # noqa: E731
        return pick(self.voice), pick(self.channel)


def training_chain() -> Chain:
    """The retraining's chain (experiments/retraining-plan.md)."""
    from .effects import BandLimit, Codec, Gain, Noise, Pitch, Room, Tempo, World

    # a talker's room and noise come before the channel that carries them
    return Chain(voice=(World(), Tempo(), Pitch()), channel=(Room(), Noise(), BandLimit(), Codec(), Gain()))
