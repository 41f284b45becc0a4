"""Side-channel recipes: presets load, incompatible knobs are refused in one line, the CLI stays small, the
shipped preset is the documented lineage, and a miniature staged recipe runs and merges on CPU."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pytest
import torch

from ticktock.protocol import Decision
from ticktock.train.examples import UnitSpec
from ticktock.train.side_channel import Recipe, StagedRecipe, load_config
from ticktock.train.side_channel.examples import build_side_channel_example

from conftest import random_model

PLAIN = [{"name": "plain"}]
TERMS = [{"name": "ce"}, {"name": "distill"}]


@pytest.mark.parametrize("name", ["paper", "shipped", "retrain"])
def test_presets_load_and_round_trip(name):
    config = load_config(name)
    recipes = config.stages if isinstance(config, StagedRecipe) else [config]
    for r in recipes:
        r = getattr(r, "recipe", r)
        again = Recipe(**json.loads(json.dumps(r.to_dict())))
        assert again.to_dict() == r.to_dict()


@pytest.mark.parametrize("changes, message", [
    ({"sources": [{"name": "plain", "share": 0.5}]}, "shares must sum to 1"),
    ({"sources": [{"name": "plain", "share": 0.7}, {"name": "long", "share": 0.3}], "terms": TERMS},
     "add the 'memory' term"),
    ({"terms": [*TERMS, {"name": "recall", "weight": 2}]}, "'recall' term acts on memory examples"),
    ({"terms": [{"name": "ce", "weight": -1}]}, "weight must be non-negative"),
    ({"terms": [{"name": "pause", "tags": ["pause", "barge_in"]}]}, "tags takes pause and/or backchannel"),
    ({"terms": [{"name": "ce"}, {"name": "ce"}]}, "listed twice"),
    ({"terms": [{"name": "ce"}, {"name": "memory"}], "sources": [{"name": "memory", "local_distill": 16}]},
     "add the 'distill' term"),
    ({"sources": [{"name": "memory", "layout": "exact", "fact_swap": 1.0}]}, "do not apply to it"),
    ({"sources": [{"name": "memory", "fact_swap": 1.5}]}, "must be within [0, 1]"),
    ({"sources": [{"name": "long", "layout": "exact"}], "buffer": 4096}, "buffer must be 1024 or less"),
    ({"sources": [{"name": "long", "reuse": 0}]}, "reuse must be at least 1"),
    ({"sources": [{"name": "plainest"}]}, "unknown source 'plainest'"),
    ({"adapter": {"name": "lora", "rnak": 8}}, "unexpected keyword argument 'rnak'"),
    ({"placement": "middle"}, "placement must be one of"),
    ({"buffer": 8, "batch": 16}, "must hold at least a batch"),
    ({"family_weights": {"no_such_family": 2.0}}, "unknown task family"),
    ({"data": "festival-only"}, "data must be one of espeak, multi-engine, multi-engine-scrambled, multi-engine-read"),
])
def test_recipe_refuses_what_does_not_go_together(changes, message):
    fields = {"sources": PLAIN, "terms": [*TERMS, {"name": "memory"}], **changes}
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")) as err:
        Recipe(**fields)
    assert "\n" not in str(err.value)


def test_overrides_are_checked_like_the_preset():
    with pytest.raises(ValueError, match="must hold at least a batch"):
        replace(load_config("paper"), batch=80000)


@pytest.mark.parametrize("argv, message", [
    (["--config", "nonesuch"], "no recipe file or preset 'nonesuch'"),
    (["--batch", "80000"], "must hold at least a batch"),
    (["--config", "shipped", "--time-budget", "10"], "drop --init and --time-budget"),
    (["--stage", "a"], "--stage is for a staged recipe"),
])
def test_cli_refuses_in_one_line_before_anything_runs(argv, message, tmp_path):
    from ticktock.cli import main

    with pytest.raises(SystemExit, match=message):
        main(["train", "side-channel", "--out", str(tmp_path / "run"), "--device", "cpu", *argv])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("stage", ["base", "side-channel"])
def test_train_subcommands_keep_few_flags(stage):
    """Each `ticktock train` subcommand has at most 12 options of its own (counted from the parser)."""
    import argparse

    from ticktock.commands import train

    root = argparse.ArgumentParser()
    train.add_parser(root.add_subparsers())
    tsub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction)).choices["train"]
    stages = next(a for a in tsub._actions if isinstance(a, argparse._SubParsersAction)).choices
    flags = [a for a in stages[stage]._actions if a.option_strings and a.dest != "help"]
    assert len(flags) <= 12, [a.option_strings for a in flags]


LINEAGE = [  # docs/side-channel.md, docs/memory.md and docs/model/side-channel/side_channel-*.json
    ("a", None, 440, 5e-4, 2, "lora"), ("j", "a", 430, 3e-4, 3, "lora"), ("c", "j", 190, 2e-4, 4, "lora"),
    ("l", "c", 390, 3e-4, 9, "lora"), ("m", "l", 100, 3e-4, 10, "lora"), ("m2", "m", 110, 3e-4, 11, "lora"),
    ("p", "m2", 300, 2e-4, 13, "lora"), ("b", "p", 240, 2e-4, 16, "lora"), ("q2", "b", 490, 7e-4, 37, "full"),
    ("q3", "q2", 420, 4e-4, 38, "full"), ("q4", "q3", 470, 4e-4, 39, "full"), ("l1", "q4", 465, 4e-4, 42, "full"),
    ("l2", "l1", 440, 3e-4, 43, "full"), ("e1", "l2", 440, 3e-4, 60, "full"), ("e2", "e1", 440, 1.5e-4, 61, "full"),
]


def test_shipped_preset_is_the_documented_lineage():
    staged = load_config("shipped")
    got = [(s.name, s.start, s.seconds, s.recipe.lr, s.recipe.seed, s.recipe.adapter.name) for s in staged.stages]
    assert got == LINEAGE
    assert (staged.merge.a, staged.merge.b, staged.merge.t) == ("l2", "e2", 0.5)
    assert staged.total_seconds == 5365
    knobs = {s.name: s.recipe for s in staged.stages}
    assert knobs["a"].delay_jitter == 0 and all(knobs[n].delay_jitter == 0.3 for n in ("j", "b", "q2", "e2"))
    assert [t.tags for t in knobs["b"].terms if t.name == "pause"] == [("pause", "backchannel")]
    long = {n: next(s for s in knobs[n].sources if s.name == "long") for n in knobs}
    assert long["q3"].recall_share == 0.4 and long["q4"].recall_share == 0.5 and long["l1"].local_distill == 16
    assert long["q2"].fact_swap == long["q2"].history_shuffle == 1.0 and long["e1"].layout == "exact"
    assert knobs["e1"].batch == 16 and knobs["e1"].buffer == 512 and long["e1"].max_len == 12288


UNITS = [UnitSpec(Decision.LISTEN), UnitSpec(Decision.LISTEN), UnitSpec(Decision.SPEAK, "sure, here you go"),
         UnitSpec(Decision.SPEAK, "okay", turn_end=True)]
WORDS = ["", "what is", "the capital of france", "okay"]


def test_a_miniature_staged_recipe_runs_resumes_and_merges(protocol, tmp_path):
    """Two tiny stages (a LoRA, then a whole decoder continuing it) and their midpoint, on CPU: the result is a
    decoder-only side channel equal to ½ A + ½ B; a second call skips the finished stages."""
    pytest.importorskip("peft")
    from ticktock.model import load_model, save_model
    from ticktock.model.adapter import load_whole_side_channel
    from ticktock.train.side_channel.stages import run_stages, staged_from

    p = protocol
    save_model(random_model(3, p.vocab_size, std=0.1), p.tokenizer, tmp_path / "base")
    audio = np.random.default_rng(0).standard_normal(16000 * len(UNITS)).astype(np.float32) * 0.1

    def make(seed: int):
        return build_side_channel_example(p, "hello", UNITS, WORDS, audio, random.Random(seed), "after_content",
                                          max_len=400)

    tiny = {"sources": PLAIN, "terms": TERMS, "placement": "after_content", "steps": 3, "batch": 2, "buffer": 2,
            "warmup": 1, "lr": 3e-3}
    staged = staged_from({"recipes": {"lora": tiny, "whole": {**tiny, "adapter": {"name": "full"}}},
                          "stages": [{"name": "one", "recipe": "lora", "seconds": 60},
                                     {"name": "two", "from": "one", "recipe": "whole", "seconds": 60}],
                          "merge": {"a": "one", "b": "two", "t": 0.5}})
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="run that stage first"):
        run_stages(staged, out, tmp_path / "base", only="two", device="cpu", workers=1, make_example=make)
    result = run_stages(staged, out, tmp_path / "base", device="cpu", workers=1, make_example=make)
    assert result == out / "side-channel" and (result / "decoder.safetensors").is_file()
    assert not (result / "model.safetensors").exists()
    models = []
    for folder in (out / "one" / "model", out / "two" / "model", result):
        m, _ = load_model(tmp_path / "base")
        models.append(load_whole_side_channel(m, folder).state_dict())
    for k, v in models[2].items():
        if k.startswith("lm."):
            torch.testing.assert_close(v, (models[0][k] + models[1][k]) / 2, atol=2e-3, rtol=1e-3, msg=k)
    stamp = (out / "one" / "side_channel.json").stat().st_mtime_ns
    run_stages(staged, out, tmp_path / "base", device="cpu", workers=1, make_example=make)  # resumable: all done
    assert (out / "one" / "side_channel.json").stat().st_mtime_ns == stamp
    # a chain fits one base: the merge over it refuses another base by name
    save_model(random_model(4, p.vocab_size, std=0.1), p.tokenizer, tmp_path / "other")
    with pytest.raises(ValueError, match="fitted to another base"):
        run_stages(staged, out, tmp_path / "other", only="merge", device="cpu", workers=1, make_example=make)


def test_the_retrain_preset_is_the_shipped_stages_on_the_retrainings_data():
    """`retrain` extends `shipped`: the same stages, recipes and merge, each stage rendering `multi-engine` data."""
    shipped, retrain = load_config("shipped"), load_config("retrain")
    assert [(s.name, s.seconds, s.start) for s in retrain.stages] == [(s.name, s.seconds, s.start) for s in shipped.stages]
    assert retrain.merge == shipped.merge
    for a, b in zip(shipped.stages, retrain.stages):
        assert a.recipe.data == "espeak" and b.recipe.data == "multi-engine"
        assert replace(b.recipe, data="espeak").to_dict() == a.recipe.to_dict()


def test_next_stages_continue_what_is_there_within_the_time(tmp_path):
    """A machine holding only stage m of the shipped chain runs m2 and p in 470 s (110 + 300 + 2 × 30); one
    holding nothing starts at a; a stage longer than the time still runs alone; a finished chain has none."""
    from ticktock.train.side_channel import load_config
    from ticktock.train.side_channel.run import DONE_FILE

    staged = load_config("shipped")
    assert staged.next_stages(tmp_path, 600) == ["a"]  # 440 + 30; j (430) would not fit
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / DONE_FILE).write_text("{}")
    assert staged.next_stages(tmp_path, 470) == ["m2", "p"]
    assert staged.next_stages(tmp_path, 469) == ["m2"]
    assert staged.next_stages(tmp_path, 10) == ["m2"]
    for name in [s.name for s in staged.stages]:
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / DONE_FILE).write_text("{}")
    assert staged.next_stages(tmp_path, 600) == []
