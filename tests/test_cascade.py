"""The pocketsphinx ASR cascade transcribes English speech (skipped without pocketsphinx)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import ticktock
from ticktock.audio.io import resample
from ticktock.bench.wer import corpus_wer

pytest.importorskip("pocketsphinx")
pytest.importorskip("jiwer")

from ticktock.bench.cascade import PocketSphinx  # noqa: E402

EXAMPLES = Path(ticktock.__file__).parent / "assets" / "examples"
SENTENCE = "please remember that my sister lives in boston and her birthday is on the fifth of may"


@pytest.fixture(scope="module")
def asr() -> PocketSphinx:
    return PocketSphinx()


def test_transcribes_the_shipped_example(asr):
    audio, sr = sf.read(EXAMPLES / "qa.wav", dtype="float32")
    assert sr == 16000
    ref = " ".join(json.loads((EXAMPLES / "qa.json").read_text())["user"])
    hyp = asr.transcribe(audio)
    assert len(hyp.split()) >= 3, "speech must give words"
    assert corpus_wer([ref], [hyp]) < 1.5  # held-out synthetic voice + noise: pocketsphinx is weak here
    assert asr.transcribe(np.zeros(16000, np.float32)) == ""


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_clean_speech_wer_below_one(asr, tmp_path):
    wav = tmp_path / "s.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), SENTENCE], check=True)
    audio, sr = sf.read(wav, dtype="float32")
    hyp = asr.transcribe(resample(audio, sr, 16000))
    assert corpus_wer([SENTENCE], [hyp]) < 0.9


def test_refuses_stereo(asr):
    with pytest.raises(ValueError, match="mono"):
        asr.transcribe(np.zeros((100, 2), np.float32))
