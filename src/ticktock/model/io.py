"""Save/load a model directory: config.json + model.safetensors + tokenizer.json; HF Qwen2/Llama import."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from .config import DecoderConfig, ModelConfig
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


def _hf_decoder_config(d: dict) -> DecoderConfig:
    fields = DecoderConfig.__dataclass_fields__
    cfg = DecoderConfig(**{k: v for k, v in d.items() if k in fields})
    if "attention_bias" not in d:  # Qwen2 configs omit it: q/k/v carry a bias
        cfg.attention_bias = d.get("model_type", "qwen2") == "qwen2"
    return cfg


def load_model(path: str | Path | None = None, device: str = "cpu", dtype: torch.dtype = torch.float32):
    """Load a ticktock model dir or an HF Qwen2/Llama checkpoint dir. Returns (model, tokenizer | None)."""
    path = Path(path) if path else DEFAULT_MODEL
    cfg_file = path / "config.json"
    if not cfg_file.exists():
        raise FileNotFoundError(f"no config.json in {path} (expected a ticktock model or an HF checkpoint directory)")
    raw = json.loads(cfg_file.read_text())
    if "ticktock" in raw:
        cfg = ModelConfig.from_dict(raw["ticktock"])
        prefix = ""
    else:  # an HF checkpoint: decoder only; its weights live under "model.*" and "lm_head.*"
        cfg = ModelConfig(_hf_decoder_config(raw), None)
        prefix = "lm."
    with torch.device("meta"):  # no random init, no fp32 copy on the host: the weights are assigned below
        model = DuplexLM(cfg)
    state = {}
    for f in sorted(path.glob("*.safetensors")):
        state.update({prefix + k: v for k, v in load_file(str(f)).items()})
    if not state:
        raise FileNotFoundError(f"no *.safetensors weights in {path}")
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    missing = [m for m in missing if not (cfg.decoder.tie_word_embeddings and m == "lm.lm_head.weight")]
    if missing or unexpected:
        raise ValueError(f"checkpoint {path} does not match its config: missing {missing[:5]}, unexpected {unexpected[:5]}")
    if cfg.decoder.tie_word_embeddings:
        model.lm.lm_head.weight = model.lm.model.embed_tokens.weight
    model.to(device=device, dtype=dtype).eval()
    tok_file = path / "tokenizer.json"
    tokenizer = None
    if tok_file.exists():
        from .tokenizer import load_tokenizer
        tokenizer = load_tokenizer(tok_file)
    return model, tokenizer
