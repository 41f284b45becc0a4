"""Tests for ticktock.audio: validation errors, io, resampling, chunking, log-mel."""

from __future__ import annotations


import numpy as np
import pytest
import soundfile as sf
import torch

from ticktock.audio import (
    SAMPLE_RATE,
    AudioError,
    StreamingLogMel,
    check_audio,
    chunk_log_mel,
    load_audio,
    load_wav,
    log_mel,
    resample,
    split_chunks,
)


def _sine(freq: float, sr: int, seconds: float, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(round(sr * seconds))) / sr
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _peak_hz(x: np.ndarray, sr: int) -> float:
    spec = np.abs(np.fft.rfft(x * np.hanning(x.size)))
    return float(np.fft.rfftfreq(x.size, 1 / sr)[spec.argmax()])


# --- bad inputs -----------------------------------------------------------------


def test_empty_array():
    with pytest.raises(AudioError, match="empty"):
        check_audio(np.zeros(0, np.float32), 16000)
    with pytest.raises(AudioError, match="empty"):
        check_audio(np.zeros((0, 2), np.float32), 16000)


def test_zero_length_wav(tmp_path):
    path = tmp_path / "empty.wav"
    sf.write(path, np.zeros(0, np.float32), 16000)
    with pytest.raises(AudioError, match="empty"):
        load_wav(path)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_samples(bad):
    x = np.zeros(1000, np.float32)
    x[10] = bad
    with pytest.raises(AudioError, match="NaN or infinite"):
        check_audio(x, 16000)


def test_non_finite_wav(tmp_path):
    path = tmp_path / "nan.wav"
    x = np.zeros(1000, np.float32)
    x[5] = np.nan
    sf.write(path, x, 16000, subtype="FLOAT")
    with pytest.raises(AudioError, match="NaN or infinite"):
        load_wav(path)


@pytest.mark.parametrize("sr", [4000, 400000, 0, -16000, float("nan"), "16000", None, True])
def test_bad_sample_rate(sr):
    with pytest.raises(AudioError, match=r"unsupported sample rate .*8 kHz to 192 kHz"):
        check_audio(np.zeros(100, np.float32), sr)


def test_bad_sample_rate_file(tmp_path):
    path = tmp_path / "low.wav"
    sf.write(path, np.zeros(4000, np.float32), 4000)
    with pytest.raises(AudioError, match="unsupported sample rate 4000"):
        load_audio(path)


def test_text_file_named_wav(tmp_path):
    path = tmp_path / "x.wav"
    path.write_text("this is not audio\n")
    with pytest.raises(AudioError, match="not a readable audio file: .*x.wav"):
        load_wav(path)
    with pytest.raises(AudioError, match="not a readable audio file"):
        load_audio(path)


def test_missing_file(tmp_path):
    with pytest.raises(AudioError, match="not found: .*nope.wav"):
        load_wav(tmp_path / "nope.wav")
    with pytest.raises(AudioError, match="not a file"):
        load_wav(tmp_path)


@pytest.mark.parametrize(
    "arr",
    [
        np.zeros(10, np.complex64),
        np.array([0.0, "a"], dtype=object),
        np.zeros(10, np.int64),
        np.zeros(10, np.uint8),
        np.zeros(10, bool),
    ],
    ids=["complex", "object", "int64", "uint8", "bool"],
)
def test_wrong_dtype(arr):
    with pytest.raises(AudioError, match="unsupported sample dtype"):
        check_audio(arr, 16000)


def test_wrong_type_and_shape():
    with pytest.raises(AudioError, match="numpy array"):
        check_audio([0.0, 0.1], 16000)
    with pytest.raises(AudioError, match="1-D .* or 2-D"):
        check_audio(np.zeros((2, 2, 2), np.float32), 16000)
    with pytest.raises(AudioError, match="transpose"):
        check_audio(np.zeros((2, 16000), np.float32), 16000)


def test_audio_error_is_value_error():
    assert issubclass(AudioError, ValueError)


# --- good inputs ----------------------------------------------------------------


def test_check_audio_int16_and_float64():
    out = check_audio(np.array([16384, -32768], np.int16), 16000)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [0.5, -1.0])
    out = check_audio(np.array([0.25, -0.5]), 44100.0)
    assert out.dtype == np.float32 and out.shape == (2,)


def test_stereo_downmix(tmp_path):
    left, right = np.full(800, 0.5, np.float32), np.full(800, -0.1, np.float32)
    stereo = np.stack([left, right], axis=1)  # (frames, channels)
    np.testing.assert_allclose(check_audio(stereo, 16000), 0.2, atol=1e-6)
    path = tmp_path / "stereo.wav"
    sf.write(path, stereo, 22050, subtype="FLOAT")
    samples, sr = load_wav(path)
    assert sr == 22050 and samples.shape == (800,) and samples.dtype == np.float32
    np.testing.assert_allclose(samples, 0.2, atol=1e-6)


def test_load_audio_resamples_to_16k(tmp_path):
    path = tmp_path / "tone.wav"
    sf.write(path, _sine(1000, 48000, 0.5), 48000, subtype="PCM_16")
    out = load_audio(path)
    assert out.dtype == np.float32 and out.shape == (8000,)
    assert abs(_peak_hz(out, SAMPLE_RATE) - 1000) < 5


@pytest.mark.parametrize("sr", [44100, 48000, 8000])
def test_resample_keeps_frequency_and_length(sr):
    x = _sine(1000, sr, 1.0)
    y = resample(x, sr, 16000)
    assert y.dtype == np.float32
    assert y.shape == (int(np.ceil(x.size * 16000 / sr)),)
    assert abs(_peak_hz(y, 16000) - 1000) < 2
    inner = y[1000:-1000]  # away from the zero-padded edges
    np.testing.assert_allclose(np.abs(inner).max(), 0.5, rtol=1e-3)


def test_resample_rejects_aliases():
    # 12 kHz at 44.1 kHz would alias to 4 kHz at 16 kHz without the low-pass.
    y = resample(_sine(12000, 44100, 0.5, amp=1.0), 44100)
    assert np.abs(y[1000:-1000]).max() < 1e-3


def test_resample_identity_and_short():
    x = np.random.default_rng(0).standard_normal(123).astype(np.float32)
    np.testing.assert_array_equal(resample(x, 16000, 16000), x)
    for n in (0, 1, 2, 7):
        assert resample(np.ones(n, np.float32), 44100).shape == (int(np.ceil(n * 16000 / 44100)),)
        assert resample(np.ones(n, np.float32), 8000).shape == (2 * n,)
    assert resample(np.ones(10, np.float32), 22050.5).shape == (8,)  # non-integer rate path


def test_split_chunks_pads_last():
    x = np.arange(1, 40001, dtype=np.float32)
    chunks = split_chunks(x)
    assert [c.shape for c in chunks] == [(16000,)] * 3
    np.testing.assert_array_equal(np.concatenate(chunks)[:40000], x)
    assert np.all(chunks[-1][8000:] == 0) and chunks[-1][7999] == 40000
    assert len(split_chunks(np.ones(16000, np.float32))) == 1
    assert [c.shape for c in split_chunks(np.ones(5), 8000, 0.5)] == [(4000,)]
    with pytest.raises(AudioError, match="empty"):
        split_chunks(np.zeros(0, np.float32))


# --- features -------------------------------------------------------------------


def _speechy(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(seconds * SAMPLE_RATE)
    gate = np.arange(n) % 7000 > 3000  # bursts of tone over noise
    x = 0.1 * rng.standard_normal(n) + _sine(220, SAMPLE_RATE, seconds, 0.3) * gate
    return x.astype(np.float32)


def test_log_mel_shape_and_range():
    x = _speechy(1.3)
    feats = log_mel(x)
    assert feats.dtype == torch.float32
    assert feats.shape == ((x.size - 400) // 160 + 1, 80)
    assert feats.min() >= -1.0 - 1e-6  # fixed floor: (-8 + 4) / 4
    assert log_mel(np.zeros(399, np.float32)).shape == (0, 80)
    assert torch.equal(log_mel(torch.from_numpy(x)), feats)


def test_streaming_equals_offline():
    x = _speechy(3.0)
    stream = StreamingLogMel()
    outs = [stream(c) for c in split_chunks(x)]
    assert all(o.shape == (100, 80) for o in outs)
    offline = log_mel(np.concatenate([np.zeros(240, np.float32), x]))
    assert offline.shape == (300, 80)
    torch.testing.assert_close(torch.cat(outs), offline, atol=1e-4, rtol=0)

    stream.reset()  # a fresh stream reproduces the first chunk
    torch.testing.assert_close(stream(x[:16000]), outs[0], atol=1e-4, rtol=0)


def test_chunk_log_mel_context():
    x = _speechy(2.0)
    first, second = x[:16000], x[16000:]
    stream = StreamingLogMel()
    stream(first)
    ctx = stream.left_context
    assert ctx.shape == (240,)
    np.testing.assert_allclose(ctx.numpy(), first[-240:])
    # Whole previous chunk or just its tail give the same result; None == silence.
    a, b = chunk_log_mel(second, first), chunk_log_mel(second, first[-240:])
    assert a.shape == (100, 80)
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(chunk_log_mel(first, None), chunk_log_mel(first, np.zeros(240)))
    # A silence hypothesis with the same context is pure and leaves the stream untouched.
    silence = chunk_log_mel(np.zeros(16000, np.float32), ctx)
    assert silence.shape == (100, 80)
    torch.testing.assert_close(stream(second), a, atol=1e-4, rtol=0)
    with pytest.raises(AudioError, match="multiple of 160"):
        chunk_log_mel(np.zeros(1000, np.float32), None)
