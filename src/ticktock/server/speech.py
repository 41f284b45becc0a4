"""The spoken reply: a speak unit's text -> PCM16 at 16 kHz with espeak-ng (for `audio.delta`)."""

from __future__ import annotations

import base64

import numpy as np

from ..scenarios.espeak import EspeakError, EspeakRenderer, espeak_available, resample_fft
from ..scenarios.voices import Voice

REPLY_VOICE = Voice("en-us", rate=175, pitch=50)


class Speaker:
    def __init__(self, voice: Voice = REPLY_VOICE):
        self.voice = voice
        self.renderer = EspeakRenderer() if espeak_available() else None

    @property
    def available(self) -> bool:
        return self.renderer is not None

    def pcm16(self, text: str) -> bytes:
        """Little-endian 16-bit samples at 16 kHz (empty for empty text). Runs a subprocess: call off the event loop."""
        if not text.strip() or self.renderer is None:
            return b""
        try:
            x, sr = self.renderer.synth(text, self.voice)
        except EspeakError:
            return b""
        y = resample_fft(x, sr)
        return (np.clip(y, -1.0, 1.0) * 32767).astype("<i2").tobytes()

    def base64(self, text: str) -> str:
        return base64.b64encode(self.pcm16(text)).decode("ascii")
