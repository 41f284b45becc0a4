"""Save/load a model directory: config.json + model.safetensors + tokenizer.json; published checkpoints by layout."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from .duplex import DuplexLM

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "assets" / "ticktock-tiny"


def save_model(model: DuplexLM, tokenizer, path: str | Path, dtype: torch.dtype = torch.float16) -> None:
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps({"ticktock": model.cfg.to_dict()}, indent=2))
    state = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()
             if not (model.cfg.decoder.tie_word_embeddings and k == "lm.lm_head.weight")}
    save_file(state, str(path / "model.safetensors"))
    if tokenizer is not None:
        tokenizer.save(str(path / "tokenizer.json"))


def checkpoint_shards(path: Path) -> list[Path]:
    """The safetensors files of a checkpoint folder: those its index names, else every *.safetensors."""
    index = path / "model.safetensors.index.json"
    if index.exists():
        return [path / f for f in sorted(set(json.loads(index.read_text())["weight_map"].values()))]
    return sorted(path.glob("*.safetensors"))


def checkpoint_keys(shards: list[Path]) -> set[str]:
    """Every tensor name in the shards (headers only: no tensor is read)."""
    keys: set[str] = set()
    for f in shards:
        with safe_open(str(f), "pt") as h:
            keys.update(h.keys())
    return keys


def default_dtype(layout: str, device: str | torch.device) -> torch.dtype:
    """fp32 for ticktock's own models (as saved and trained here); a published checkpoint: bf16 on CUDA."""
    return torch.bfloat16 if layout != "ticktock" and torch.device(device).type == "cuda" else torch.float32


@torch.no_grad()
def load_weights(model: DuplexLM, shards: list[Path], rename, device, dtype: torch.dtype) -> set[str]:
    """Assign the tensors `rename` keeps (checkpoint name -> state-dict name, None: skip) shard by shard,
    each read straight onto `device` and cast to `dtype`; returns the state-dict names assigned."""
    want = set(model.state_dict())
    done: set[str] = set()
    unexpected: list[str] = []
    for f in shards:
        part = {}
        with safe_open(str(f), "pt", device=str(torch.device(device))) as h:
            for key in h.keys():
                name = rename(key)
                if name is None:
                    continue
                if name not in want:
                    unexpected.append(key)
                    continue
                t = h.get_tensor(key)
                part[name] = t.to(dtype) if t.is_floating_point() else t
        model.load_state_dict(part, strict=False, assign=True)
        done |= set(part)
        del part
    if unexpected:
        raise ValueError(f"checkpoint tensors {unexpected[:5]} name no part of this model")
    return done


def load_protocol(path: str | Path, tokenizer, layout: str):
    """The protocol a checkpoint speaks: its own file (`ticktock_protocol.json` beside it), else its layout's
    shipped preset (assets/protocols/), else ticktock's own special tokens."""
    from ..protocol import PROTOCOL_FILE, DuplexProtocol
    from .layouts import layouts

    own = Path(path) / PROTOCOL_FILE
    if own.is_file():
        return DuplexProtocol.from_file(tokenizer, own)
    preset = next((lay.protocol for lay in layouts() if lay.name == layout), None)
    return DuplexProtocol.from_file(tokenizer, preset) if preset else DuplexProtocol(tokenizer)


def load_model(path: str | Path | None = None, device: str = "cpu", dtype: torch.dtype | None = None):
    """Load a checkpoint folder whose layout `model.layouts` recognises: ticktock's own, an HF decoder
    (Qwen2/Qwen3/Llama), the Qwen2.5-Omni thinker, MiniCPM-o. Returns (model, tokenizer | None).

    Only the tensors a duplex session uses are read, shard by shard, straight into `dtype` on `device`
    (the modules are built on the meta device). dtype None: `default_dtype` (bf16 for a published
    checkpoint on CUDA, else fp32). `model.layout` names the layout.
    """
    from .layouts import detect_layout, layouts

    path = Path(path) if path else DEFAULT_MODEL
    cfg_file = path / "config.json"
    if not cfg_file.exists():
        raise FileNotFoundError(f"no config.json in {path} (expected a ticktock model or an HF checkpoint directory)")
    raw = json.loads(cfg_file.read_text())
    layout = detect_layout(raw)
    if layout is None:
        raise ValueError(f"{cfg_file} matches no known checkpoint layout ({', '.join(x.name for x in layouts())}); "
                         "docs/models.md says how to add one")
    shards = checkpoint_shards(path)
    if not shards:
        raise FileNotFoundError(f"no *.safetensors weights in {path}")
    cfg = layout.config(raw, checkpoint_keys(shards))
    dtype = dtype or default_dtype(layout.name, device)
    with torch.device("meta"):  # no random init, no fp32 copy on the host: the weights are assigned below
        model = DuplexLM(cfg)
    done = load_weights(model, shards, layout.rename, device, dtype)
    tied = {"lm.lm_head.weight"} if cfg.decoder.tie_word_embeddings else set()
    missing = sorted(set(model.state_dict()) - done - tied)
    if missing:
        raise ValueError(f"checkpoint {path} does not match its config: missing {missing[:5]}")
    if cfg.decoder.tie_word_embeddings:
        model.lm.lm_head.weight = model.lm.model.embed_tokens.weight
    model.to(device=device, dtype=dtype).eval()
    model.layout = layout.name
    tok_file = path / "tokenizer.json"
    tokenizer = None
    if tok_file.exists():
        from .tokenizer import load_tokenizer
        tokenizer = load_tokenizer(tok_file)
    return model, tokenizer
