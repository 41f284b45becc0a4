"""Load the model + protocol a command runs on: the shipped `ticktock-tiny` by default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from .model import DEFAULT_MODEL, DuplexLM, load_model, preset
from .model.adapter import adapter_for, apply_side_channel, is_gated
from .protocol import DuplexProtocol


def _merged(path: Path) -> bool:
    """Is this model dir `ticktock train side-channel`'s output, with the adapter already folded in?
    (A segment-gated adapter cannot be folded in: its OUT/model is the base with the two rows.)"""
    adapter = path.parent / "adapter"
    return (path.parent / "side_channel.json").is_file() and adapter.is_dir() and not is_gated(adapter)


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
    (`model.adapter.adapter_for`) is merged in (attached, if it is segment-gated); `ticktock train
    side-channel`'s OUT/model of an ungated adapter is already merged, and so is left as it is.
    """
    path = Path(path) if path else DEFAULT_MODEL
    if (path / "model.safetensors").exists():
        model, tok = load_model(path, device, torch.float32)
        if tok is None:
            raise FileNotFoundError(f"{path} has no tokenizer.json")
        name = path.name
        adapter = adapter_for(path) if side_channel else None
        if adapter is not None and not _merged(path):
            apply_side_channel(model, adapter)
            name += "+side-channel"
        elif side_channel and adapter is None:
            raise FileNotFoundError(f"no side-channel adapter for {path}: train one with `ticktock train side-channel` "
                                    "and pass its OUT/model")
        return Runtime(model.to(dtype=dtype), DuplexProtocol(tok), name, trained=True)
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
