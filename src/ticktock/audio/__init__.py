"""Audio front-end: load/validate/resample to 16 kHz mono, 1 s chunks, log-mel.

    samples = load_audio("in.wav")             # float32 (N,) at 16 kHz
    chunks = split_chunks(samples)             # [(16000,), ...], last one zero-padded
    fe = StreamingLogMel()
    feats = [fe(c) for c in chunks]            # each (100, 80)
"""

from .chunks import speech_end, split_chunks
from .errors import AudioError
from .features import (
    CONTEXT_SAMPLES,
    HOP_LENGTH,
    N_FFT,
    N_MELS,
    StreamingLogMel,
    chunk_log_mel,
    log_mel,
    mel_filterbank,
)
from .io import SAMPLE_RATE, check_audio, load_audio, load_wav, resample

__all__ = [
    "AudioError",
    "CONTEXT_SAMPLES",
    "HOP_LENGTH",
    "N_FFT",
    "N_MELS",
    "SAMPLE_RATE",
    "StreamingLogMel",
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
