"""Batched log-mel and augmentation on the training device (same features as `ticktock.audio`)."""

from __future__ import annotations

import numpy as np
import torch

from ..audio.features import HOP_LENGTH, LOG_FLOOR, N_FFT, mel_filterbank


def batch_log_mel(x: torch.Tensor) -> torch.Tensor:
    """x (B, N) float -> (B, T, 80) float32, T = (N - 400)//160 + 1; matches `audio.log_mel` per row."""
    window = torch.hann_window(N_FFT, periodic=True, device=x.device, dtype=torch.float32)
    fb = torch.tensor(np.array(mel_filterbank()), dtype=torch.float32, device=x.device)  # (80, 201)
    frames = x.float().unfold(-1, N_FFT, HOP_LENGTH)  # (B, T, 400)
    power = torch.fft.rfft(frames * window, dim=-1).abs().pow(2)
    mel = power @ fb.T
    return (mel.clamp(min=1e-10).log10().clamp(min=LOG_FLOOR) + 4.0) / 4.0


def augment_waveform(x: torch.Tensor, gen: torch.Generator | None = None) -> torch.Tensor:
    """Random gain and additive white/pink noise at a random SNR, per row. x (B, N)."""
    b, n = x.shape
    dev = x.device
    r = lambda *s: torch.rand(*s, device=dev, generator=gen)  # noqa: E731
    gain = 10 ** ((r(b, 1) * 18 - 12) / 20)  # -12 .. +6 dB
    x = x * gain
    sig = x.pow(2).mean(-1, keepdim=True).clamp(min=1e-8)
    snr = 10 ** ((r(b, 1) * 35 + 5) / 10)  # 5 .. 40 dB
    noise = torch.randn(b, n, device=dev, generator=gen)
    pink = torch.cumsum(noise, -1)
    pink = pink - pink.mean(-1, keepdim=True)
    pink = pink / pink.std(-1, keepdim=True).clamp(min=1e-6)
    use_pink = (r(b, 1) < 0.5).float()
    noise = use_pink * pink + (1 - use_pink) * noise
    on = (r(b, 1) < 0.7).float()
    return x + on * noise * (sig / snr).sqrt()


def spec_augment(mel: torch.Tensor, gen: torch.Generator | None = None, freq_masks: int = 2, width: int = 10,
                 fill: torch.Tensor | None = None) -> torch.Tensor:
    """Frequency masking (time masks would erase short words the labels still name). mel (B, T, F).

    Masked bins take the features' floor: ticktock's fixed one, or `fill` (B, T, 1) where it varies."""
    b, _, f = mel.shape
    out = mel.clone()
    floor = (LOG_FLOOR + 4.0) / 4.0 if fill is None else fill
    for _ in range(freq_masks):
        w = torch.randint(0, width + 1, (b,), device=mel.device, generator=gen)
        s = (torch.rand(b, device=mel.device, generator=gen) * (f - w)).long()
        idx = torch.arange(f, device=mel.device)
        m = (idx[None] >= s[:, None]) & (idx[None] < (s + w)[:, None])  # (B, F)
        out = torch.where(m[:, None, :], floor, out)
    return out


def freq_warp(mel: torch.Tensor, gen: torch.Generator | None = None, max_warp: float = 0.12) -> torch.Tensor:
    """Stretch each row's mel axis by a random factor in [1 - max_warp, 1 + max_warp] (VTLN-like).

    A cheap stand-in for unseen speakers: formants move, timing (and so every label) stays. mel (B, T, F).
    """
    b, _, f = mel.shape
    alpha = 1 + (torch.rand(b, device=mel.device, generator=gen) * 2 - 1) * max_warp  # (B,)
    src = (torch.arange(f, device=mel.device, dtype=torch.float32)[None] / alpha[:, None]).clamp(max=f - 1)  # (B, F)
    lo = src.floor().long()
    hi = (lo + 1).clamp(max=f - 1)
    w = (src - lo)[:, None, :]  # (B, 1, F)
    gather = lambda idx: torch.gather(mel, 2, idx[:, None, :].expand(-1, mel.shape[1], -1))  # noqa: E731
    return gather(lo) * (1 - w) + gather(hi) * w
