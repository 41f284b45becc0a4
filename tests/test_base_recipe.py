"""`train base` recipes: the presets are the settings of the runs they name, a bad `--set` or an incompatible
combination is refused in one line before anything loads, and a recipe round-trips through its JSON."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ticktock.train.base_recipe import PRESETS, BaseRecipe, load_recipe, parse_set
from ticktock.train.data import DATA_PRESETS
from ticktock.train.trainer import TrainConfig

# `train base`'s defaults before recipes (its flags' defaults), and the flags each run gave on top of them
DEFAULTS = {"model": "tiny", "init_decoder": None, "audio_layers": None, "decoder_layers": None, "data": "espeak", "read_share": None, "transcribe_share": 0.3, "word_weight": 0.5,
            "family_weights": None, "reply_weights": None, "max_offset": 3000, "max_len": 512, "steps": 20000,
            "batch": 64, "lr": 1.5e-3, "warmup": 300, "buffer": 40000, "seed": 0}
STAGE_M = {  # docs/model-card.md, stage M's command
    "lr": 2e-4, "seed": 9, "transcribe_share": 0.2, "word_weight": 0.5, "max_len": 512, "max_offset": 10000,
    "reply_weights": {"plus": 8.0, "minus": 8.0, "times": 4.0},
    "family_weights": {"short_qa": 2.0, "tool_call": 2.0, "backchannel": 2.0, "pause_handling": 1.5, "tool_pair": 3.0}}
RUNS = {
    "default": {},
    "stage-m": STAGE_M,
    "retrain": {**STAGE_M, "data": "multi-engine", "seed": 11},  # experiments/retraining/run.sh, stage 1
    "omni-finetune": {"batch": 64, "max_len": 512, "lr": 1.5e-3, "warmup": 300, "transcribe_share": 0.3,
                      "word_weight": 0.0},  # experiments/omni_finetune/run.sh
}


def test_every_preset_is_tested():
    assert sorted(p.stem for p in PRESETS.glob("*.json")) == sorted(RUNS)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_presets_reproduce_the_runs_they_name(name):
    recipe = load_recipe(name)
    assert recipe.to_dict() == {**DEFAULTS, **RUNS[name]}
    assert BaseRecipe(**json.loads(json.dumps(recipe.to_dict()))) == recipe
    assert recipe.train_config(380, 15) == TrainConfig(
        steps=recipe.steps, batch=recipe.batch, lr=recipe.lr, warmup=recipe.warmup, max_len=recipe.max_len,
        time_budget_s=380, buffer=recipe.buffer, workers=15, seed=recipe.seed)


def test_set_takes_numbers_names_and_weights_in_their_command_line_form():
    got = load_recipe("stage-m", parse_set(["lr=1e-3", "data=multi-engine", "init_decoder=runs/v1",
                                            "family_weights=short_qa=2,tool_call=2", "reply_weights=null"]))
    assert got == replace(load_recipe("stage-m"), lr=1e-3, data="multi-engine", init_decoder="runs/v1",
                          family_weights={"short_qa": 2.0, "tool_call": 2.0}, reply_weights=None)


def test_read_share_overrides_the_data_presets_and_null_keeps_it():
    read = load_recipe("retrain", parse_set(["data=multi-engine-read"]))
    assert read.training_data() == DATA_PRESETS["multi-engine-read"]
    more = replace(read, read_share=0.4).training_data()
    assert more.read_share == 0.4 and replace(more, read_share=0.2) == DATA_PRESETS["multi-engine-read"]
    assert load_recipe("retrain", parse_set(["read_share=0.3"])).training_data().read_share == 0.3


@pytest.mark.parametrize("changes, message", [
    ({"steps": "abc"}, "steps must be an integer, got 'abc'"),
    ({"lr": "fast"}, "lr must be a number"),
    ({"data": "opera"}, "data must be one of espeak, multi-engine, multi-engine-scrambled, multi-engine-read"),
    ({"model": "huge"}, "unknown model preset 'huge'"),
    ({"model": "qwen2.5-omni-7b-thinker"}, "audio tower trains through the LM's loss alone"),
    ({"family_weights": {"no_such_family": 2}}, "unknown task family 'no_such_family'"),
    ({"family_weights": 2}, "family_weights must be a dict or NAME=W"),
    ({"reply_weights": "Minus=6"}, "bad reply weight 'Minus=6'"),
    ({"transcribe_share": 1.5}, r"transcribe_share must be within \[0, 1\]"),
    ({"read_share": -0.1}, r"read_share must be within \[0, 1\]"),
    ({"max_offset": 0}, "must be at least 1"),
    ({"warmup": 0}, "must be at least 1"),
    ({"buffer": 8, "batch": 16}, "must hold at least a batch"),
    ({"decoder_layers": 0}, "decoder_layers must be at least 1"),
])
def test_recipe_refuses_what_does_not_go_together(changes, message):
    with pytest.raises(ValueError, match=message) as err:
        BaseRecipe(**changes)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("argv, message", [
    (["--config", "nonesuch"], "no recipe file or preset 'nonesuch'"),
    (["--set", "max_offst=10"], "--set 'max_offst=10': expected KEY=VALUE with KEY one of model, "),
    (["--set", "word_weight"], "expected KEY=VALUE"),
    (["--batch", "80000"], "must hold at least a batch"),
    (["--protocol", "qwen2.5-omni-thinker"], "--protocol maps a checkpoint's tokens: it needs --init"),
    (["--init", "runs/x", "--set", "init_decoder=runs/v1"], "init_decoder starts a fresh audio encoder"),
    (["--set", "decoder_layers=8"], "decoder_layers deepens a model continued with --init"),
])
def test_cli_refuses_in_one_line_before_anything_runs(argv, message, tmp_path):
    from ticktock.cli import main

    with pytest.raises(SystemExit, match=message) as err:
        main(["train", "base", "--out", str(tmp_path / "run"), "--device", "cpu", *argv])
    assert "\n" not in str(err.value.code)
    assert not (tmp_path / "run").exists()
