"""Audio front-end: load/validate/resample to 16 kHz mono, 1 s chunks, log-mel, the model's streaming front.

    samples = load_audio("in.wav")             # float32 (N,) at 16 kHz
    chunks = split_chunks(samples)             # [(16000,), ...], last one zero-padded
    fe = StreamingLogMel()
    feats = [fe(c) for c in chunks]            # each (100, 80)
"""

from importlib import import_module

from .chunks import speech_end, split_chunks
from .errors import AudioError
from .io import SAMPLE_RATE, check_audio, load_audio, load_wav, resample

# What needs torch is imported on first use: the scenario tools take the sample rate from here without it.
_WITH_TORCH = {
    **dict.fromkeys(("CONTEXT_SAMPLES", "HOP_LENGTH", "N_FFT", "N_MELS", "StreamingLogMel", "chunk_log_mel",
                     "log_mel", "mel_filterbank"), "features"),
    **dict.fromkeys(("AudioFrontEnd", "audio_front_end"), "front_end"),
}


def __getattr__(name: str):
    if name in _WITH_TORCH:
        return getattr(import_module(f".{_WITH_TORCH[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AudioError",
    "AudioFrontEnd",
    "CONTEXT_SAMPLES",
    "HOP_LENGTH",
    "N_FFT",
    "N_MELS",
    "SAMPLE_RATE",
    "StreamingLogMel",
    "audio_front_end",
    "check_audio",
    "chunk_log_mel",
    "load_audio",
    "load_wav",
    "log_mel",
    "mel_filterbank",
    "resample",
    "speech_end",
    "split_chunks",
]
