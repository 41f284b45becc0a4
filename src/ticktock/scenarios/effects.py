"""The augmentations of a training rendering, each a small dataclass (`augment.Chain` draws them per session).

`draw(rng)` picks one session's parameters (None: the effect is off for it); `apply(x, params, ...)` does it.
Voice effects (World, Tempo, Pitch) change every word clip of a voice before the session is laid out, so the
layout times the words with their new durations and every word time stays exact. Channel effects (Room,
BandLimit, Codec, Noise, Gain) change the mixed session and keep its length and its word times.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..audio.io import SAMPLE_RATE
from .augment import colored_noise
from .espeak import resample_fft

Params = dict | None


class Mix(NamedTuple):
    """What a channel effect may need of the session besides its audio."""

    speech_rms: float  # the user's speech level
    clips: list[np.ndarray]  # every word clip of the session


def _chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def wsola(x: np.ndarray, rate: float, frame: int = 480, tol: int = 120) -> np.ndarray:
    """x (n,) played `rate` times as fast, its pitch kept: waveform-similarity overlap-add (Verhelst and
    Roelands 1993). Returns round(n / rate) samples."""
    hop, pad = frame // 2, frame + tol
    xp = np.pad(x.astype(np.float32), (pad, pad))
    n_out = max(1, int(round(len(x) / rate)))
    out, norm = np.zeros(n_out + 2 * frame, np.float32), np.zeros(n_out + 2 * frame, np.float32)
    win = np.hanning(frame).astype(np.float32)
    prev = None
    for k in range(0, n_out + hop, hop):  # out[k] is output time k - hop
        start = min(len(xp) - frame, pad + int(round((k - hop) * rate)))
        if prev is not None and prev + hop + frame <= len(xp):
            natural = xp[prev + hop: prev + hop + frame]  # what would follow the last frame copied
            lo, hi = max(0, start - tol), min(len(xp) - frame, start + tol)
            start = lo + int(np.argmax(np.correlate(xp[lo: hi + frame], natural, "valid")))
        out[k: k + frame] += xp[start: start + frame] * win
        norm[k: k + frame] += win
        prev = start
    return out[hop: hop + n_out] / np.maximum(norm[hop: hop + n_out], 1e-3)


@dataclass(frozen=True)
class World:
    """WORLD analysis / resynthesis (Morise et al. 2016, `pyworld`): F0 scaled, spectral envelope warped."""

    p: float = 0.25
    f0: tuple[float, float] = (0.7, 1.4)
    warp: tuple[float, float] = (-0.12, 0.12)  # envelope frequency axis stretched by 1 + warp

    def draw(self, rng: random.Random) -> Params:
        return {"f0": round(rng.uniform(*self.f0), 3), "warp": round(rng.uniform(*self.warp), 3)} if _chance(rng, self.p) else None

    def apply(self, x: np.ndarray, params: dict) -> np.ndarray:
        import pyworld as pw

        if len(x) < 1024:  # shorter than WORLD's analysis windows: left as it is
            return x
        d = x.astype(np.float64)
        f0, t = pw.dio(d, SAMPLE_RATE, frame_period=5.0)
        sp, ap = pw.cheaptrick(d, f0, t, SAMPLE_RATE), pw.d4c(d, f0, t, SAMPLE_RATE)
        src = np.clip(np.arange(sp.shape[1]) / (1 + params["warp"]), 0, sp.shape[1] - 1)
        lo = src.astype(int)
        hi, w = np.minimum(lo + 1, sp.shape[1] - 1), src - lo
        sp = sp[:, lo] * (1 - w) + sp[:, hi] * w
        y = pw.synthesize(f0 * params["f0"], np.ascontiguousarray(sp), ap, SAMPLE_RATE, 5.0)
        return np.pad(y, (0, max(0, len(x) - len(y))))[: len(x)].astype(np.float32)


@dataclass(frozen=True)
class Tempo:
    """Speech faster or slower, its pitch kept (`wsola`)."""

    p: float = 0.5
    rate: tuple[float, float] = (0.85, 1.2)

    def draw(self, rng: random.Random) -> Params:
        return {"rate": round(rng.uniform(*self.rate), 3)} if _chance(rng, self.p) else None

    def apply(self, x: np.ndarray, params: dict) -> np.ndarray:
        return wsola(x, params["rate"])


@dataclass(frozen=True)
class Pitch:
    """Pitch (and formants) moved by whole-clip resampling, the duration restored by `wsola`."""

    p: float = 0.5
    semitones: tuple[float, float] = (-3.0, 3.0)

    def draw(self, rng: random.Random) -> Params:
        return {"semitones": round(rng.uniform(*self.semitones), 2)} if _chance(rng, self.p) else None

    def apply(self, x: np.ndarray, params: dict) -> np.ndarray:
        ratio = 2 ** (params["semitones"] / 12)
        y = wsola(x, 1 / ratio)  # ratio times as long, then played ratio times as fast
        out_sr = int(round(SAMPLE_RATE / ratio))
        return resample_fft(y, SAMPLE_RATE, out_sr) if out_sr != SAMPLE_RATE else y


@dataclass(frozen=True)
class Room:
    """Reverberation: a room of the bank (`rooms`, RT60 0.1-0.8 s, simulated with pyroomacoustics)."""

    p: float = 0.4

    def draw(self, rng: random.Random) -> Params:
        from .rooms import N_ROOMS

        return {"room": rng.randrange(N_ROOMS)} if _chance(rng, self.p) else None

    def apply(self, x: np.ndarray, params: dict, mix: Mix) -> np.ndarray:
        from .rooms import room_bank

        bank = room_bank()[0]
        h = bank[params["room"] % len(bank)]  # a smaller bank (tests) reuses its rooms
        n = len(x) + len(h) - 1
        size = 1 << (n - 1).bit_length()
        y = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(h, size), size)[: len(x)]
        return (y * np.sqrt(np.sum(x**2) / max(np.sum(y**2), 1e-12))).astype(np.float32)


@dataclass(frozen=True)
class BandLimit:
    """A telephone (3.4 kHz) or wideband (7 kHz) channel: everything above the cutoff removed."""

    p: float = 0.3
    cutoffs_hz: tuple[float, ...] = (3400.0, 7000.0)

    def draw(self, rng: random.Random) -> Params:
        return {"cutoff_hz": rng.choice(self.cutoffs_hz)} if _chance(rng, self.p) else None

    def apply(self, x: np.ndarray, params: dict, mix: Mix) -> np.ndarray:
        spec = np.fft.rfft(x)
        f = np.fft.rfftfreq(len(x), 1 / SAMPLE_RATE)
        spec *= np.clip((params["cutoff_hz"] * 1.1 - f) / (params["cutoff_hz"] * 0.1), 0, 1)  # a 10 % slope
        return np.fft.irfft(spec, len(x)).astype(np.float32)


@dataclass(frozen=True)
class Codec:
    """A lossy round trip: 8-bit mu-law (G.711) or 8 kHz sampling."""

    p: float = 0.25
    kinds: tuple[str, ...] = ("mulaw", "8k")

    def draw(self, rng: random.Random) -> Params:
        return {"kind": rng.choice(self.kinds)} if _chance(rng, self.p) else None

    def apply(self, x: np.ndarray, params: dict, mix: Mix) -> np.ndarray:
        if params["kind"] == "8k":
            return resample_fft(resample_fft(x, SAMPLE_RATE, 8000), 8000, SAMPLE_RATE)[: len(x)]
        mu = 255.0
        peak = max(float(np.max(np.abs(x))), 1e-6)
        y = np.sign(x) * np.log1p(mu * np.abs(x / peak)) / np.log1p(mu)
        y = np.round(y * 127) / 127
        return (np.sign(y) * np.expm1(np.abs(y) * np.log1p(mu)) / mu * peak).astype(np.float32)


@dataclass(frozen=True)
class Noise:
    """Pink noise or babble at 5-30 dB below the user's speech. Babble is the session's own word clips laid at
    random in four streams and reversed: speech-like, with no word the labels could name."""

    p: float = 0.6
    snr_db: tuple[float, float] = (5.0, 30.0)
    babble_share: float = 0.5
    streams: int = 4

    def draw(self, rng: random.Random) -> Params:
        if not _chance(rng, self.p):
            return None
        return {"kind": "babble" if rng.random() < self.babble_share else "pink",
                "snr_db": round(rng.uniform(*self.snr_db), 1), "seed": rng.getrandbits(32)}

    def apply(self, x: np.ndarray, params: dict, mix: Mix) -> np.ndarray:
        gen, clips = np.random.default_rng(params["seed"]), mix.clips
        if params["kind"] == "babble" and clips:
            noise = np.zeros(len(x), np.float32)
            for _ in range(self.streams * max(1, len(x) // SAMPLE_RATE)):
                c = clips[gen.integers(len(clips))][::-1]
                a = int(gen.integers(max(1, len(x) - len(c))))
                noise[a: a + len(c)] += c[: len(x) - a]
            noise /= np.sqrt(np.mean(noise**2)) + 1e-12
        else:
            noise = colored_noise(len(x), "pink", gen)
        return x + noise * np.float32(mix.speech_rms * 10 ** (-params["snr_db"] / 20))


@dataclass(frozen=True)
class Gain:
    p: float = 1.0
    db: tuple[float, float] = (-20.0, 6.0)

    def draw(self, rng: random.Random) -> Params:
        return {"db": round(rng.uniform(*self.db), 1)} if _chance(rng, self.p) else None

    def apply(self, x: np.ndarray, params: dict, mix: Mix) -> np.ndarray:
        return x * np.float32(10 ** (params["db"] / 20))
