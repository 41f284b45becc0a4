"""The graphed audio front (log-mel + encoder staged on the model's device) hears what the CPU front hears."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ticktock.audio.front_end import AudioFrontEnd
from ticktock.model import DuplexLM, preset

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _pushes(front: AudioFrontEnd, chunks: list[np.ndarray]) -> list[torch.Tensor]:
    out = [front.silence_hypothesis()]
    for c in chunks:
        out.append(front.push(c))
        out.append(front.silence_hypothesis())
    return [o.float().cpu() for o in out]


def _agree(device: str, graphed_ok: float) -> None:
    torch.manual_seed(0)
    model = DuplexLM(preset("test")).to(device).eval()
    rng = np.random.default_rng(0)
    chunks = [(0.1 * rng.standard_normal(16000)).astype(np.float32) for _ in range(4)]
    plain = _pushes(AudioFrontEnd(model, 16000, graphed=False), chunks)
    graphed = _pushes(AudioFrontEnd(model, 16000, graphed=True), chunks)
    assert len(plain) == len(graphed) == 9
    for a, b in zip(plain, graphed):
        assert a.shape == b.shape
        assert (a - b).abs().max() <= graphed_ok * a.abs().max()


def test_staged_front_equals_the_cpu_front_on_a_cpu():
    """The staging (left context, mel context, silence hypothesis) is the CPU front's, exactly."""
    _agree("cpu", 0.0)


@pytest.mark.gpu
@CUDA
def test_graph_replay_agrees_with_the_cpu_front():
    _agree("cuda", 1e-4)
