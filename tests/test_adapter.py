"""Folding a side-channel adapter into a model needs no PEFT: W += (alpha / r) * B @ A, rows set."""

import json

import pytest
import torch
from safetensors.torch import save_file

from ticktock.model import DuplexLM, preset
from ticktock.model.adapter import adapter_for, merge_side_channel


def write_adapter(folder, model: DuplexLM, r: int = 4, alpha: int = 8, seed: int = 0) -> dict:
    torch.manual_seed(seed)
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"r": r, "lora_alpha": alpha}))
    state = {}
    for name, mod in model.lm.named_modules():
        if name.endswith(("q_proj", "down_proj")):
            out_f, in_f = mod.weight.shape
            state[f"base_model.model.{name}.lora_A.weight"] = torch.randn(r, in_f)
            state[f"base_model.model.{name}.lora_B.weight"] = torch.randn(out_f, r)
    save_file(state, str(folder / "adapter_model.safetensors"))
    rows = {"ids": torch.tensor([3, 5]), "weight": torch.randn(2, model.cfg.decoder.hidden_size)}
    save_file(rows, str(folder / "asr_rows.safetensors"))
    return {"state": state, "rows": rows, "scale": alpha / r}


def test_merge_equals_lora_formula(tmp_path):
    torch.manual_seed(1)
    model = DuplexLM(preset("test")).eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ad = write_adapter(tmp_path / "m-side-channel", model)
    merge_side_channel(model, tmp_path / "m-side-channel")
    layer = model.lm.model.layers[1].self_attn.q_proj
    a = ad["state"]["base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight"]
    b = ad["state"]["base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight"]
    want = before["lm.model.layers.1.self_attn.q_proj.weight"] + ad["scale"] * b @ a
    assert torch.allclose(layer.weight, want, atol=1e-5)
    assert torch.equal(model.lm.model.layers[0].self_attn.k_proj.weight,
                       before["lm.model.layers.0.self_attn.k_proj.weight"])  # untargeted: untouched
    emb = model.lm.model.embed_tokens.weight
    assert torch.equal(emb[[3, 5]], ad["rows"]["weight"])
    assert torch.equal(emb[4], before["lm.model.embed_tokens.weight"][4])


def test_adapter_lookup_and_errors(tmp_path):
    model = DuplexLM(preset("test")).eval()
    (tmp_path / "m").mkdir()
    assert adapter_for(tmp_path / "m") is None
    write_adapter(tmp_path / "m-side-channel", model)
    assert adapter_for(tmp_path / "m") == tmp_path / "m-side-channel"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "adapter_config.json").write_text(json.dumps({"r": 4, "lora_alpha": 8}))
    with pytest.raises(FileNotFoundError, match="incomplete"):
        merge_side_channel(model, tmp_path / "bad")


def test_adapter_naming_another_layer_is_rejected(tmp_path):
    model = DuplexLM(preset("test")).eval()
    ad = tmp_path / "x"
    write_adapter(ad, model)
    save_file({"base_model.model.model.layers.9.mlp.up_proj.lora_A.weight": torch.zeros(4, 8),
               "base_model.model.model.layers.9.mlp.up_proj.lora_B.weight": torch.zeros(8, 4)},
              str(ad / "adapter_model.safetensors"))
    with pytest.raises(ValueError, match="names no layer"):
        merge_side_channel(model, ad)
