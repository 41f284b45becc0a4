"""Shared fixtures: a tiny tokenizer/protocol and tiny random duplex models (CPU, milliseconds), and the shipped
model's runtime for the tests that run it."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

if not torch.cuda.is_available():  # Triton (where installed) reads this when imported: its kernels then run on the CPU
    os.environ.setdefault("TRITON_INTERPRET", "1")

from ticktock.model import DuplexLM, preset
from ticktock.model.tokenizer import train_tokenizer
from ticktock.protocol import DuplexProtocol

# The test models are tiny: one thread is fastest, and stays fast when other work shares the cores.
torch.set_num_threads(1)

CORPUS = [
    "what is the capital of france", "the capital of france is paris", "book a flight from tokyo to osaka",
    'find_flights(origin="TYO", dest="OSA", day="Fri")', "flight JL123 at 9:40, 120 dollars",
    "the weather in oslo is sunny", "set a timer for ten minutes", "okay", "uh-huh", "sure, here you go",
    "one two three four five six seven eight nine ten", "You are ticktock, a helpful voice assistant.",
]


@pytest.fixture(autouse=True)
def grad_mode_restored():
    """Commands run in-process switch autograd off for their whole process (`eval`, `bench`, ...): give the next
    test the mode it started with."""
    enabled = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(enabled)


@pytest.fixture(scope="session")
def protocol() -> DuplexProtocol:
    return DuplexProtocol(train_tokenizer(CORPUS * 4, vocab_size=400), max_unit_tokens=24)


def random_model(seed: int, vocab: int, audio_scale: float = 1.0, std: float = 0.5) -> DuplexLM:
    """A random `test`-preset model; large weights make its greedy choices varied, not constant."""
    torch.manual_seed(seed)
    cfg = preset("test")
    cfg.decoder.vocab_size = vocab
    m = DuplexLM(cfg).eval()
    with torch.no_grad():
        for name, p in m.lm.named_parameters():
            if p.dim() > 1:
                p.normal_(0, std)
        for p in m.audio.parameters():
            p.mul_(audio_scale)
    return m


@pytest.fixture(scope="session")
def shipped_protocol() -> DuplexProtocol:
    """The protocol over the shipped model's tokenizer (for texts of the real world)."""
    from ticktock.model.io import DEFAULT_MODEL
    from ticktock.model.tokenizer import load_tokenizer

    return DuplexProtocol(load_tokenizer(DEFAULT_MODEL / "tokenizer.json"))


@pytest.fixture(scope="module")
def runtime():
    """The shipped model's runtime, one per test module (modules that use it skip where no model is shipped)."""
    from ticktock.runtime import load_runtime

    return load_runtime()


@pytest.fixture(scope="session")
def tiny_model(protocol) -> DuplexLM:
    return random_model(0, protocol.vocab_size)


def noise_chunks(n: int, seed: int = 0, speech_units: tuple[int, ...] = (1, 2)) -> list[np.ndarray]:
    """n one-second chunks: quiet noise, louder 'speech-like' noise in `speech_units`."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        amp = 0.3 if i in speech_units else 0.001
        out.append((rng.standard_normal(16000) * amp).astype(np.float32))
    return out


def steer_greedy(model: DuplexLM, protocol: DuplexProtocol, shares: dict[str, float], seed: int = 0) -> DuplexLM:
    """Test hook: where the model's two best tokens fall in a fixed random class, that class's special
    token (e.g. `asr_start`) becomes the greedy choice instead.

    A deterministic function of the logits, so the oracle and every decoder see the same model;
    random models then open, fill and close side-channel segments and make decisions often.
    """
    vocab = model.cfg.decoder.vocab_size
    target = torch.full((vocab,), -1, dtype=torch.long)
    order = torch.randperm(vocab, generator=torch.Generator().manual_seed(seed))
    at = 0
    for name, share in shares.items():
        n = int(share * vocab)
        target[order[at : at + n]] = protocol.id(name)
        at += n
    logits = model.lm.logits

    def steered(h: torch.Tensor) -> torch.Tensor:
        z = logits(h)
        flat = z.reshape(-1, z.shape[-1]).clone()  # (n, V)
        top = flat.topk(2, dim=-1)
        pair = (top.indices[:, 0] * 31 + top.indices[:, 1]) % vocab  # the top pair varies more than the top token
        to = target[pair.cpu()].to(flat.device)
        rows = torch.nonzero(to >= 0).flatten()
        flat[rows, to[rows]] = top.values[rows, 0] + 1.0
        return flat.reshape(z.shape)

    model.lm.logits = steered
    return model
