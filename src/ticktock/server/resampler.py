"""Streaming resampling to 16 kHz: frames of any size in, the same samples as resampling the whole stream out.

`ticktock.audio.resample` treats the signal as zero outside the array, so
resampling each frame on its own would click at every frame edge. This keeps
`pad` input samples of left context and waits for `pad` samples of lookahead,
and cuts segments on the rational grid (multiples of `down` input samples = `up`
output samples), so each output sample sees exactly the input the offline
resampler would have given it.
"""

from __future__ import annotations

import math

import numpy as np

from ..audio import SAMPLE_RATE, resample

# the filter half-width of `ticktock.audio.resample`: 48 zero crossings at 94 % of the lower Nyquist
_HALF_WIDTH_ZEROS, _ROLLOFF = 48, 0.94


class StreamResampler:
    """push(float32 frames at `rate`) -> float32 samples at 16 kHz whose input support is complete."""

    def __init__(self, rate: int, target: int = SAMPLE_RATE):
        self.rate, self.target = rate, target
        g = math.gcd(rate, target)
        self.up, self.down = target // g, rate // g
        half_width = _HALF_WIDTH_ZEROS / (_ROLLOFF * min(1.0, target / rate))
        self.pad = 0 if rate == target else -(-(math.ceil(half_width) + 2) // self.down) * self.down
        self.buf = np.zeros(self.pad, dtype=np.float32)  # input from index `base` (zeros before the stream)
        self.base = -self.pad
        self.emitted = 0  # input index up to which output was produced (a multiple of `down`)

    @property
    def received(self) -> int:
        return self.base + len(self.buf)

    def pending_output(self) -> int:
        """Output samples a `pull` would return now."""
        return max(0, (self.received - self.pad) // self.down * self.down - self.emitted) * self.up // self.down

    def push(self, x: np.ndarray) -> None:
        self.buf = np.concatenate([self.buf, x.astype(np.float32, copy=False)])

    def pull(self) -> np.ndarray:
        if self.rate == self.target:
            out, self.buf = self.buf, np.zeros(0, dtype=np.float32)
            self.base += len(out)
            return out
        end = (self.received - self.pad) // self.down * self.down
        if end <= self.emitted:
            return np.zeros(0, dtype=np.float32)
        y = resample(self.buf[: end + self.pad - self.base], self.rate, self.target)
        lo, hi = ((i - self.base) * self.up // self.down for i in (self.emitted, end))
        out = y[lo:hi]
        self.buf = self.buf[end - self.pad - self.base:]
        self.base, self.emitted = end - self.pad, end
        return out

    def flush(self) -> np.ndarray:
        """The rest of the stream (it ends here: zeros after it), then the resampler is empty."""
        total = self.received
        if self.rate == self.target:
            return self.pull()
        tail = -(-(total - self.emitted) // self.down) * self.down - (total - self.emitted)
        self.push(np.zeros(tail + self.pad, dtype=np.float32))
        want = math.ceil(total * self.up / self.down) - self.emitted * self.up // self.down
        return self.pull()[: max(0, want)]
