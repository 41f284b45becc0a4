"""Load the model + protocol a command runs on: the shipped `ticktock-tiny` by default."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from .model import DEFAULT_MODEL, DuplexLM, load_model, preset
from .model.io import load_protocol
from .model.adapter import adapter_for, apply_side_channel, is_merged
from .protocol import DuplexProtocol


@dataclass
class Runtime:
    model: DuplexLM
    protocol: DuplexProtocol
    name: str
    trained: bool


def load_runtime(path: str | Path | None = None, device: str = "cpu", dtype: torch.dtype = torch.float32,
                 side_channel: bool = False) -> Runtime:
    """The model at `path`, or the shipped default; a random-init `tiny` model if none is shipped yet.

    `side_channel`: the model is to write transcription segments, so its adapter
    (`model.adapter.adapter_for`) is merged in (loaded, if it is a whole model); `ticktock train
    side-channel`'s OUT/model of a LoRA adapter (or of `--full`) is already the side-channel model, and so
    is left as it is.
    """
    path = Path(path) if path else DEFAULT_MODEL
    if any((path / f).is_file() for f in ("model.safetensors", "model.safetensors.index.json")):
        own = (path / "config.json").is_file() and "ticktock" in json.loads((path / "config.json").read_text())
        model, tok = load_model(path, device, torch.float32 if own else dtype)  # a published one: straight to dtype
        if tok is None:
            raise FileNotFoundError(f"{path} has no tokenizer.json")
        dec = model.cfg.decoder
        if dec.tokenizer_vocab is None and tok.get_vocab_size() < dec.vocab_size:
            dec.tokenizer_vocab = tok.get_vocab_size()  # real checkpoints pad their tables: mask the padding
        name = path.name
        if side_channel and not is_merged(path):
            adapter = adapter_for(path)
            if adapter is None:
                raise FileNotFoundError(f"no side-channel adapter for {path}: train one with `ticktock train "
                                        "side-channel` and pass its OUT/model")
            apply_side_channel(model, adapter)
            name += "+side-channel"
        return Runtime(model.to(dtype=dtype), load_protocol(path, tok, model.layout), name, trained=True)
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
