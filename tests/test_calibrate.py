"""Calibration on the CPU: the profile loads into the cost-model clock, costs grow with new tokens,
the CLI's last line is JSON, and the default-profile lookup fails with a clear message."""

from __future__ import annotations

import json
import time

import pytest
import torch

from ticktock.bench import profiles
from ticktock.bench.calibrate import Grid, build_model, calibrate, random_model, summarize, write_profile
from ticktock.commands.calibrate import main as calibrate_main
from ticktock.model import preset
from ticktock.session.clock import CostModelClock, WallClock


@pytest.fixture(scope="module")
def profile():
    model, name = build_model("test", device="cpu")
    # 1 vs 512 new tokens: a contrast no scheduler noise hides on a model this small.
    grid = Grid(contexts=[8, 96], new_tokens=[1, 16, 512], repeats=3, warmup=1)
    return calibrate(model, grid, name=name, shape="test")


def test_profile_fields(profile):
    assert profile["new_tokens"] == [1, 16, 512] and profile["context"] == [8, 96]
    assert len(profile["ms"]) == 2 and all(len(r) == 3 for r in profile["ms"])
    assert all(v > 0 for r in profile["ms"] for v in r)
    assert profile["encoder_ms"] > 0 and profile["has_audio_encoder"]
    for key in ("device_name", "torch", "model", "shape", "dtype", "date", "fast_path"):
        assert key in profile
    assert profile["dtype"] == "fp32" and profile["fast_path"] is False  # CPU: eager


def test_profile_loads_into_cost_clock(profile, tmp_path):
    path = write_profile(profile, tmp_path / "p.json")
    clock = CostModelClock.load(path)
    for ctx in (8, 50, 96):
        assert clock.cost(512, ctx) > clock.cost(1, ctx) > 0
        assert clock.cost(1, ctx) <= clock.cost(256, ctx) <= clock.cost(512, ctx)  # interpolation stays between
    assert clock.encoder_seconds(0.0) == pytest.approx(profile["encoder_ms"] / 1000)
    ran = []
    out, seconds = clock.time_encoder(lambda: ran.append(1) or "emb")
    assert (out, ran) == ("emb", [1]) and seconds == pytest.approx(profile["encoder_ms"] / 1000)  # the profile's, once
    assert json.loads(path.read_text()) == profile


def test_the_wall_clock_times_the_audio_front_it_runs():
    out, seconds = WallClock("cpu").time_encoder(lambda: time.sleep(0.02) or "emb")
    assert out == "emb" and 0.02 <= seconds < 1.0


def test_summary(profile):
    s = summarize(profile)
    assert set(s["one_token_ms"]) == {"8", "96"}
    assert "ratio_32" not in s  # 32 is not in this grid


def test_cli_json_last_line(tmp_path, capsys):
    out = tmp_path / "cli.json"
    rc = calibrate_main(["--shape", "test", "--device", "cpu", "--contexts", "16", "--new-tokens", "1,32",
                         "--repeats", "1", "--warmup", "0", "--no-tree", "--out", str(out), "--json"])
    assert rc == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    summary = json.loads(line)
    assert summary["profile"] == str(out) and set(summary) >= {"one_token_ms", "ratio_32"}
    assert CostModelClock.load(out).cost(32, 16) > 0


def test_direct_random_model_keeps_ties_and_dtype():
    cfg = preset("test")
    m = random_model(cfg, "cpu", torch.bfloat16, direct=True)
    assert all(p.dtype == torch.bfloat16 and p.device.type == "cpu" for p in m.parameters())
    assert m.lm.lm_head.weight is m.lm.model.embed_tokens.weight  # the test preset ties them
    assert torch.all(m.lm.model.norm.weight == 1)
    assert m.lm.model.layers[0].mlp.gate_proj.weight.float().std() == pytest.approx(0.02, rel=0.2)


def test_default_profile_lookup(tmp_path, monkeypatch):
    empty = tmp_path / "none"
    for attr in ("PROFILE_DIR", "_REPO_DIR", "PACKAGED_DIR"):
        monkeypatch.setattr(profiles, attr, empty)
    monkeypatch.delenv("TICKTOCK_PROFILE_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="ticktock calibrate"):
        profiles.default_profile()
    d = tmp_path / "profiles"
    d.mkdir()
    (d / "cpu-ticktock-tiny.json").write_text("{}")
    monkeypatch.setenv("TICKTOCK_PROFILE_DIR", str(d))
    assert profiles.default_profile() == d / "cpu-ticktock-tiny.json"
    (d / "h200-qwen2.5-7b-bf16.json").write_text("{}")
    assert profiles.default_profile() == d / "h200-qwen2.5-7b-bf16.json"
    assert profiles.find_profile("cpu-ticktock-tiny") == d / "cpu-ticktock-tiny.json"
