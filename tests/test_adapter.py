"""Folding a side-channel adapter into a model needs no PEFT: W += (alpha / r) * B @ A, rows set."""

import copy
import json

import pytest
import torch
from safetensors.torch import save_file

from ticktock.model import DuplexLM, preset
from ticktock.model.adapter import adapter_for, apply_side_channel, merge_side_channel


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


def test_a_segment_gated_adapter_is_refused(tmp_path):
    """Segment-gated adapters (`gate.json`) were an experiment the runtime does not run: one clear error."""
    model = DuplexLM(preset("test")).eval()
    write_adapter(tmp_path / "m-side-channel", model)
    (tmp_path / "m-side-channel" / "gate.json").write_text(json.dumps({"gate": "segment"}))
    with pytest.raises(ValueError, match="segment-gated adapters .* not supported"):
        apply_side_channel(model, tmp_path / "m-side-channel")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_an_adapter_applies_to_a_model_on_the_gpu(tmp_path):
    """The adapter's tensors follow the model to its device (a CPU-only load failed on CUDA)."""
    torch.manual_seed(1)
    cpu = DuplexLM(preset("test")).eval()
    write_adapter(tmp_path / "m-side-channel", cpu)
    gpu = apply_side_channel(copy.deepcopy(cpu).cuda(), tmp_path / "m-side-channel")
    apply_side_channel(cpu, tmp_path / "m-side-channel")
    ids = torch.randint(0, 50, (1, 12))
    outs = [m.lm(m.lm.embed(ids.to(dev)), torch.arange(12, device=dev)[None])
            for m, dev in ((cpu, "cpu"), (gpu, "cuda"))]
    assert torch.allclose(outs[0], outs[1].cpu(), atol=1e-4)


def test_interpolated_side_channel_models_lie_between_their_ends():
    """The staged recipe's merge step (`train.side_channel.merge`): t = 0 and t = 1 give the two models back,
    t = 0.25 the weighted mean of every weight; models of two architectures are refused."""
    from ticktock.train.side_channel import merge as mod

    torch.manual_seed(2)
    a, b = DuplexLM(preset("test")).eval(), DuplexLM(preset("test")).eval()
    for t, want in ((0.0, a.state_dict()), (1.0, b.state_dict())):
        for k, v in mod.interpolate(a, b, t).items():
            assert torch.equal(v, want[k].float()), k
    for k, v in mod.interpolate(a, b, 0.25).items():
        assert torch.allclose(v, 0.75 * a.state_dict()[k] + 0.25 * b.state_dict()[k], atol=1e-6), k
    other = DuplexLM(preset("test")).eval()
    other.lm.model.layers = other.lm.model.layers[:1]
    with pytest.raises(ValueError, match="different weights"):
        mod.interpolate(a, other, 0.5)


def test_decoder_only_side_channel_loads_its_decoder_over_the_base_encoder(tmp_path):
    from ticktock.model import save_model
    from ticktock.model.adapter import DECODER_FILE, mark_merged, save_decoder_side_channel

    torch.manual_seed(2)
    base, trained = DuplexLM(preset("test")).eval(), DuplexLM(preset("test")).eval()
    trained.audio.load_state_dict(base.audio.state_dict())  # --full trains the decoder only
    save_model(trained, None, tmp_path / "run", dtype=torch.float32)
    with pytest.raises(ValueError, match="not a side-channel model"):
        save_decoder_side_channel(tmp_path / "run", tmp_path / "m-side-channel")
    mark_merged(tmp_path / "run", "full")
    folder = save_decoder_side_channel(tmp_path / "run", tmp_path / "m-side-channel")
    (tmp_path / "m").mkdir()
    assert adapter_for(tmp_path / "m") == folder
    audio_before = {k: v.clone() for k, v in base.audio.state_dict().items()}
    apply_side_channel(base, folder)
    got, want = base.state_dict(), trained.state_dict()
    assert all(torch.equal(got[k], want[k]) for k in want)
    assert all(torch.equal(base.audio.state_dict()[k], v) for k, v in audio_before.items())
    # a decoder file missing a tensor is refused, not half-loaded
    state = {k: v for k, v in want.items() if k.startswith("lm.") and "layers.0.mlp" not in k and k != "lm.lm_head.weight"}
    save_file(state, str(folder / DECODER_FILE))
    with pytest.raises(ValueError, match="exactly the decoder"):
        apply_side_channel(DuplexLM(preset("test")).eval(), folder)


def test_side_channel_with_its_encoder_survives_a_retrained_base(tmp_path):
    """The side channel and the encoder it was fitted on, saved as one whole model, load onto another base
    (a retrained one: other encoder, other decoder) as exactly the weights they made with the first base."""
    from ticktock.model import save_model
    from ticktock.model.adapter import mark_merged, save_decoder_side_channel, save_side_channel_with_encoder

    torch.manual_seed(3)
    base, trained, retrained = (DuplexLM(preset("test")).eval() for _ in range(3))
    trained.audio.load_state_dict(base.audio.state_dict())
    save_model(base, None, tmp_path / "m", dtype=torch.float32)
    save_model(trained, None, tmp_path / "run", dtype=torch.float32)
    mark_merged(tmp_path / "run", "full")
    decoder_only = save_decoder_side_channel(tmp_path / "run", tmp_path / "decoder-only")
    with pytest.raises(ValueError, match="not a decoder-only side channel"):
        save_side_channel_with_encoder(tmp_path / "m", tmp_path / "run", tmp_path / "x")
    folder = save_side_channel_with_encoder(tmp_path / "m", decoder_only, tmp_path / "new-side-channel")
    apply_side_channel(retrained, folder)
    got, want = retrained.state_dict(), trained.state_dict()
    assert all(torch.equal(got[k], want[k]) for k in want)
