"""The model `train base --init PATH` starts from: a ticktock model folder, or a published checkpoint folder.

A published checkpoint (e.g. a Qwen2.5-Omni thinker) loads by its layout (`model.load_model`) with its own
tokenizer. The protocol it is trained to speak is a protocol file: `--protocol` (a file or a shipped preset),
else the folder's own `ticktock_protocol.json`, else its layout's preset (`assets/protocols/`). Tokens the
file names that the tokenizer lacks are added to the tokenizer, the embedding and the LM head
(`model.vocab.add_tokens`). The trained model is saved in ticktock's format, its tower's shape in its
config and the protocol file beside it (`save_trained`), so every command loads it as it loads any model.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..model import DuplexLM, save_model
from ..model.io import load_model
from ..model.layouts import layouts
from ..model.vocab import add_tokens
from ..protocol import PROTOCOL_FILE, PROTOCOLS_DIR, DuplexProtocol


def protocol_spec(path: Path, layout: str, protocol: str | None = None) -> dict | None:
    """The protocol file's content (`DuplexProtocol.from_spec`) for the checkpoint at `path` (module doc);
    None: ticktock's own special tokens."""
    if protocol is not None:
        src = Path(protocol) if Path(protocol).is_file() else PROTOCOLS_DIR / f"{protocol}.json"
        if not src.is_file():
            known = ", ".join(sorted(f.stem for f in PROTOCOLS_DIR.glob("*.json")))
            raise FileNotFoundError(f"no protocol file {protocol} (shipped presets: {known})")
    elif (path / PROTOCOL_FILE).is_file():
        src = path / PROTOCOL_FILE
    else:
        preset = next((lay.protocol for lay in layouts() if lay.name == layout), None)
        src = PROTOCOLS_DIR / f"{preset}.json" if preset else None
    return json.loads(src.read_text()) if src else None


def spec_tokens(spec: dict) -> list[str]:
    """Every token string a protocol file names."""
    return [t for t in spec["tokens"].values() if t] + list(spec.get("extra_chunk_eos", ()))


def init_from_checkpoint(path: Path, protocol: str | None = None):
    """(model fp32 on the CPU, tokenizer, protocol, protocol file content | None) for training from `path`."""
    model, tok = load_model(path, "cpu", torch.float32)
    if tok is None:
        raise FileNotFoundError(f"{path} has no tokenizer.json")
    if model.audio is None:
        raise ValueError(f"{path} ({model.layout}) has no audio front: a duplex model needs one")
    dec = model.cfg.decoder
    if dec.tokenizer_vocab is None and tok.get_vocab_size() < dec.vocab_size:
        dec.tokenizer_vocab = tok.get_vocab_size()  # a padded table: padding ids are never targets nor outputs
    spec = protocol_spec(path, model.layout, protocol)
    if spec is None:
        return model, tok, DuplexProtocol(tok), None
    added = add_tokens(model, tok, spec_tokens(spec))
    if added:
        print(json.dumps({"added_tokens": added, "vocab": dec.vocab_size}), flush=True)
    return model, tok, DuplexProtocol.from_spec(tok, spec), spec


def save_trained(model: DuplexLM, tokenizer, spec: dict | None, path: Path) -> None:
    """ticktock's model folder (`save_model`), with the protocol file when the model speaks another protocol."""
    save_model(model, tokenizer, path)
    if spec is not None:
        (path / PROTOCOL_FILE).write_text(json.dumps(spec, indent=2))
