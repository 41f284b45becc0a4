"""Put a side-channel adapter (PEFT LoRA + the two trained token rows) into a loaded model.

`ticktock train side-channel` saves `adapter/` (PEFT's `adapter_config.json` and
`adapter_model.safetensors`, plus `asr_rows.safetensors`); the shipped model keeps a copy in
`ticktock-tiny-side-channel/`, beside it. Needs only torch. The adapter is merged,
W += (alpha / r) * B @ A, and the `<|asr_start|>`/`<|asr_end|>` embedding rows (tied with the LM head) are set.
A side channel trained whole (`--full`) ships as merged weights instead: a model folder
(`config.json`, `model.safetensors`) in the same place, loaded in place of the base's weights, or,
smaller, its decoder alone (`config.json`, `decoder.safetensors`: the `lm.*` tensors; the audio
encoder stays frozen in training, so the base's is the side channel's), or, once the base beside it is retrained,
that decoder with the encoder it was fitted on as one whole model (`save_side_channel_with_encoder`).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from .config import ModelConfig
from .duplex import DuplexLM
from .io import load_model

ADAPTER_SUFFIX = "-side-channel"  # the shipped adapter sits beside its model: ticktock-tiny-side-channel/
_PEFT_PREFIX = "base_model.model."  # PEFT wraps the decoder (`DuplexLM.lm`) as base_model.model
GATE_FILE = "gate.json"  # written by earlier segment-gated adapters, which the runtime does not run
MERGED_FILE = "side_channel_merged.json"  # in a model dir that already is the side-channel model: nothing to apply
DECODER_FILE = "decoder.safetensors"  # a whole side channel's decoder (`lm.*`) alone; the base supplies the encoder


def mark_merged(model_dir: str | Path, how: str) -> None:
    """Say in `model_dir` that its weights already hold the side channel (`how`: "lora" folded in, or "full")."""
    (Path(model_dir) / MERGED_FILE).write_text(json.dumps({"side_channel": how}))


def is_merged(model_dir: str | Path) -> bool:
    """Is this model dir the side-channel model itself (`ticktock train side-channel`'s OUT/model of a LoRA
    or of `--full`)? The marker travels with the weights, so a base copied next to a run's adapter/ is not
    taken for one."""
    return (Path(model_dir) / MERGED_FILE).is_file()


def is_decoder_only(folder: str | Path) -> bool:
    """Is this a whole side channel shipped as its decoder alone (`save_decoder_side_channel`), with no weights of
    its own for the encoder?"""
    return (Path(folder) / DECODER_FILE).is_file() and not (Path(folder) / "model.safetensors").is_file()


def is_whole(adapter: str | Path) -> bool:
    """Is this side channel a whole model (`ticktock train side-channel --full`: merged weights) rather than a LoRA?"""
    return any((Path(adapter) / f).is_file() for f in ("model.safetensors", DECODER_FILE))


def save_decoder_side_channel(model_dir: str | Path, out: str | Path) -> Path:
    """Write a `--full` run's model (`model_dir`) as a decoder-only side channel in `out` (config.json and
    `decoder.safetensors`, its `lm.*` tensors), for shipping beside its base; returns `out`."""
    from safetensors.torch import save_file

    model_dir, out = Path(model_dir), Path(out)
    if not is_merged(model_dir):
        raise ValueError(f"{model_dir} is not a side-channel model (no {MERGED_FILE})")
    state = load_file(str(model_dir / "model.safetensors"))
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v for k, v in state.items() if k.startswith("lm.")}, str(out / DECODER_FILE))
    (out / "config.json").write_text((model_dir / "config.json").read_text())
    return out


def _architecture(folder: Path) -> dict:
    """A model folder's architecture (its config.json's, normalised as `ModelConfig.to_dict`)."""
    return ModelConfig.from_dict(json.loads((folder / "config.json").read_text())["ticktock"]).to_dict()


def save_side_channel_with_encoder(base_dir: str | Path, side_channel: str | Path, out: str | Path) -> Path:
    """Write a decoder-only side channel (`side_channel`) together with the encoder of the base it was fitted on
    (`base_dir`) as one whole model in `out` (config.json, `model.safetensors`): a side channel that no longer
    needs that base, so that the base beside it can be replaced by a retrained one without re-fitting it (the
    session with the side channel on runs exactly the weights it ran before). Returns `out`."""
    from safetensors.torch import save_file

    base_dir, side_channel, out = Path(base_dir), Path(side_channel), Path(out)
    if not is_decoder_only(side_channel):
        raise ValueError(f"{side_channel} is not a decoder-only side channel (no {DECODER_FILE})")
    if _architecture(base_dir) != _architecture(side_channel):
        raise ValueError(f"the side channel in {side_channel} has another architecture than {base_dir}")
    encoder = {k: v for k, v in load_file(str(base_dir / "model.safetensors")).items() if not k.startswith("lm.")}
    decoder = load_file(str(side_channel / DECODER_FILE))
    out.mkdir(parents=True, exist_ok=True)
    save_file({**encoder, **decoder}, str(out / "model.safetensors"))
    (out / "config.json").write_text((side_channel / "config.json").read_text())
    return out


def adapter_for(model_dir: str | Path) -> Path | None:
    """The side-channel adapter of a model directory: `<dir>-side-channel/` beside it (a LoRA, or a whole
    model), or `../adapter/` (the layout `ticktock train side-channel` writes); None if there is none."""
    model_dir = Path(model_dir)
    for cand in (model_dir.parent / f"{model_dir.name}{ADAPTER_SUFFIX}", model_dir.parent / "adapter"):
        if (cand / "adapter_config.json").is_file() or is_whole(cand):
            return cand
    return None


def _lora_pairs(model: DuplexLM, adapter: Path) -> list[tuple[str, torch.Tensor, torch.Tensor, float]]:
    """Check the adapter folder; per adapted layer: (layer name, A (r, in), B (out, r), scale)."""
    if (adapter / GATE_FILE).is_file():
        raise ValueError(f"{adapter}: segment-gated adapters ({GATE_FILE}) are not supported")
    cfg_file, weights, rows_file = (adapter / n for n in ("adapter_config.json", "adapter_model.safetensors",
                                                           "asr_rows.safetensors"))
    for f in (cfg_file, weights, rows_file):
        if not f.exists():
            raise FileNotFoundError(f"side-channel adapter incomplete: {f} is missing")
    cfg = json.loads(cfg_file.read_text())
    scale = cfg["lora_alpha"] / cfg["r"]
    state = load_file(str(weights), device=str(next(model.parameters()).device))  # the model may sit on a GPU
    modules = dict(model.lm.named_modules())
    pairs = []
    for key in sorted(k for k in state if k.endswith(".lora_A.weight")):
        name = key[len(_PEFT_PREFIX):-len(".lora_A.weight")]
        if not key.startswith(_PEFT_PREFIX) or name not in modules:
            raise ValueError(f"adapter weight {key} names no layer of this model")
        pairs.append((name, state[key].float(), state[key.replace("lora_A", "lora_B")].float(), scale))
    return pairs


def _set_rows(model: DuplexLM, adapter: Path) -> None:
    """The `<|asr_start|>`/`<|asr_end|>` embedding rows (tied with the LM head) from `asr_rows.safetensors`."""
    rows = load_file(str(adapter / "asr_rows.safetensors"))
    emb = model.lm.model.embed_tokens.weight
    emb[rows["ids"].to(emb.device)] = rows["weight"].to(emb.device, emb.dtype)


@torch.no_grad()
def merge_side_channel(model: DuplexLM, adapter: str | Path) -> DuplexLM:
    """Merge the adapter at `adapter` into `model` in place (every token sees it) and return it."""
    adapter = Path(adapter)
    for name, a, b, scale in _lora_pairs(model, adapter):
        lin = model.lm.get_submodule(name)
        lin.weight += (scale * (b @ a)).to(lin.weight.dtype)
    _set_rows(model, adapter)
    return model


@torch.no_grad()
def load_whole_side_channel(model: DuplexLM, folder: str | Path) -> DuplexLM:
    """Replace `model`'s weights (in place) with the whole side-channel model in `folder`; return it."""
    if (Path(folder) / DECODER_FILE).is_file():
        return _load_decoder_side_channel(model, Path(folder))
    whole, _ = load_model(folder, "cpu", torch.float32)
    if whole.cfg.to_dict() != model.cfg.to_dict():
        raise ValueError(f"the side-channel model in {folder} has another architecture than its base")
    ref = next(model.parameters())
    model.load_state_dict({k: v.to(ref.device, ref.dtype) for k, v in whole.state_dict().items()})
    return model


def _load_decoder_side_channel(model: DuplexLM, folder: Path) -> DuplexLM:
    """Replace `model`'s decoder weights (in place) with `folder`'s `decoder.safetensors`; the encoder stays."""
    if _architecture(folder) != model.cfg.to_dict():
        raise ValueError(f"the side-channel model in {folder} has another architecture than its base")
    ref = next(model.parameters())
    state = {k: v.to(ref.device, ref.dtype) for k, v in load_file(str(folder / DECODER_FILE)).items()}
    tied = {"lm.lm_head.weight"} if model.cfg.decoder.tie_word_embeddings else set()  # saved or not: the embedding
    want = {k for k in model.state_dict() if k.startswith("lm.")} - tied
    if set(state) - tied != want:
        raise ValueError(f"{folder / DECODER_FILE} does not hold exactly the decoder's weights "
                         f"(missing {sorted(want - set(state))[:3]}, unexpected {sorted(set(state) - want)[:3]})")
    model.load_state_dict(state, strict=False)
    return model


def apply_side_channel(model: DuplexLM, adapter: str | Path) -> DuplexLM:
    """Whole models are loaded (`is_whole`), LoRA adapters merged."""
    if is_whole(adapter):
        return load_whole_side_channel(model, adapter)
    return merge_side_channel(model, adapter)
