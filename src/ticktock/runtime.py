"""Load the model + protocol a command runs on: the shipped `ticktock-tiny` by default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from .model import DEFAULT_MODEL, DuplexLM, load_model, preset
from .protocol import DuplexProtocol


@dataclass
class Runtime:
    model: DuplexLM
    protocol: DuplexProtocol
    name: str
    trained: bool


def load_runtime(path: str | Path | None = None, device: str = "cpu", dtype: torch.dtype = torch.float32) -> Runtime:
    """The model at `path`, or the shipped default; a random-init `tiny` model if none is shipped yet."""
    path = Path(path) if path else DEFAULT_MODEL
    if (path / "model.safetensors").exists():
        model, tok = load_model(path, device, dtype)
        if tok is None:
            raise FileNotFoundError(f"{path} has no tokenizer.json")
        return Runtime(model, DuplexProtocol(tok), path.name, trained=True)
    if path != DEFAULT_MODEL:
        raise FileNotFoundError(f"no model at {path} (expected config.json, model.safetensors, tokenizer.json)")
    from .model.tokenizer import train_tokenizer
    from .scenarios import corpus_texts
    tok = train_tokenizer(corpus_texts(), vocab_size=preset("tiny").decoder.vocab_size)
    cfg = preset("tiny")
    cfg.decoder.vocab_size = tok.get_vocab_size()
    torch.manual_seed(0)
    model = DuplexLM(cfg).to(device=device, dtype=dtype).eval()
    return Runtime(model, DuplexProtocol(tok), "ticktock-tiny (RANDOM INIT: no trained model shipped)", trained=False)
