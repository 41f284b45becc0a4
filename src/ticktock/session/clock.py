"""Clocks: how long a forward takes. `WallClock` measures; `CostModelClock` looks it up (docs/design.md §7).

The cost model is a calibrated table of forward time vs new tokens and context
length (written by `ticktock calibrate`), which makes replays deterministic and
projects a 7B-class model on an H200 from a CPU run.
"""

from __future__ import annotations

import bisect
import json
import time
from pathlib import Path
from typing import Any, Callable

import torch


class Clock:
    name = "base"

    def time_forward(self, run: Callable[[], Any], new_tokens: int, context: int) -> tuple[Any, float]:
        raise NotImplementedError

    def time_encoder(self, run: Callable[[], Any]) -> tuple[Any, float]:
        """The audio front's work on one chunk: its output and its seconds (`encoder_seconds` of the measured)."""
        out, seconds = self._timed(run)
        return out, self.encoder_seconds(seconds)

    def _timed(self, run: Callable[[], Any]) -> tuple[Any, float]:
        """Seconds from an idle device to the end of `run`'s device work (what was queued before is not its)."""
        self._sync()
        t0 = time.perf_counter()
        out = run()
        self._sync()
        return out, time.perf_counter() - t0

    def _sync(self) -> None:
        """Wait for the device (a CPU has nothing queued)."""

    def encoder_seconds(self, measured: float) -> float:
        return measured


class WallClock(Clock):
    name = "wall"

    def __init__(self, device: str | torch.device = "cpu"):
        self.cuda = torch.device(device).type == "cuda"

    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def time_forward(self, run, new_tokens, context):
        return self._timed(run)


def _interp(xs: list[float], ys: list[float], x: float) -> float:
    """Piecewise-linear, clamped below, linearly extrapolated above."""
    if x <= xs[0]:
        return ys[0]
    i = min(bisect.bisect_left(xs, x), len(xs) - 1)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


class CostModelClock(Clock):
    """Forward time from a profile: `ms[c][n]` at context `context[c]` and new tokens `new_tokens[n]`."""

    name = "cost"

    def __init__(self, profile: dict):
        for key in ("new_tokens", "context", "ms"):
            if key not in profile:
                raise ValueError(f"calibration profile lacks {key!r}")
        self.profile = profile
        self.new_tokens = [float(n) for n in profile["new_tokens"]]
        self.context = [float(c) for c in profile["context"]]
        self.ms = profile["ms"]
        self.encoder_ms = float(profile.get("encoder_ms", 0.0))

    @classmethod
    def load(cls, path: str | Path) -> "CostModelClock":
        return cls(json.loads(Path(path).read_text()))

    def cost(self, new_tokens: int, context: int) -> float:
        """Seconds for a forward of `new_tokens` tokens with `context` resident slots."""
        per_ctx = [_interp(self.new_tokens, row, new_tokens) for row in self.ms]
        return _interp(self.context, per_ctx, context) / 1000.0

    def time_forward(self, run, new_tokens, context):
        return run(), self.cost(new_tokens, context)

    def encoder_seconds(self, measured: float) -> float:
        return self.encoder_ms / 1000.0


def make_clock(name: str, calibration: str | Path | None = None, device: str = "cpu") -> Clock:
    if name == "wall":
        return WallClock(device)
    if name == "cost":
        from ..bench.profiles import default_profile
        return CostModelClock.load(calibration or default_profile())
    raise ValueError(f"unknown clock {name!r}; use 'wall' or 'cost'")
