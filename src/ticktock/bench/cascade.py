"""The external ASR cascade baseline: CMU PocketSphinx with the English model its PyPI package ships.

    asr = PocketSphinx()                 # raises CascadeUnavailable if pocketsphinx is missing
    text = asr.transcribe(audio)         # audio (N,) float32 at 16 kHz -> words

The audio is cut into speech regions by PocketSphinx's own voice-activity segmenter and
each region is decoded with the default en-us acoustic model, language model and
dictionary, untuned. This is the "separate ASR model" the acoustic-to-text side channel
is compared with (docs/design.md §4).
"""

from __future__ import annotations

import io

import numpy as np

from ..audio.io import SAMPLE_RATE


class CascadeUnavailable(RuntimeError):
    pass


def cascade_available() -> bool:
    try:
        import pocketsphinx  # noqa: F401
    except ImportError:
        return False
    return True


class PocketSphinx:
    name = "pocketsphinx"

    def __init__(self) -> None:
        try:
            from pocketsphinx import Decoder
        except ImportError as err:
            raise CascadeUnavailable("the ASR cascade needs pocketsphinx: pip install 'ticktock[bench]' "
                                     "(or pip install pocketsphinx)") from err
        self.decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")

    @property
    def version(self) -> str:
        from importlib.metadata import version
        return f"pocketsphinx {version('pocketsphinx')} (en-us)"

    def transcribe(self, audio: np.ndarray) -> str:
        """audio (N,) float at 16 kHz in [-1, 1] -> recognized words, lowercase, space-separated."""
        from pocketsphinx import Segmenter

        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio of shape (N,), got {audio.shape}")
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2").tobytes()
        words = []
        for seg in Segmenter(sample_rate=SAMPLE_RATE).segment(io.BytesIO(pcm)):
            self.decoder.start_utt()
            self.decoder.process_raw(seg.pcm, full_utt=True)
            self.decoder.end_utt()
            hyp = self.decoder.hyp()
            if hyp is not None and hyp.hypstr:
                words.append(hyp.hypstr)
        return " ".join(words)
