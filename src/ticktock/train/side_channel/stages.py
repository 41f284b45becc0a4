"""A staged recipe: runs that each continue an earlier one, then an interpolation of two of them.

The shipped side channel is one (`presets/shipped.json`); the chain takes far longer than one device session, so
`run_stages` is resumable: a stage whose folder holds `side_channel.json` is done and skipped, and `only` runs one
stage. Layout under OUT: one folder per stage (a `run.train_side_channel` output), the merge's whole model in
OUT/<merge name>/model, and the result, the decoder-only side channel, in OUT/side-channel (as the shipped one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...model.adapter import save_decoder_side_channel
from .merge import interpolate_side_channels
from .recipe import Recipe, read_config, recipe_from
from .run import DONE_FILE, base_fingerprint, check_same_base, train_side_channel

RESULT = "side-channel"  # OUT/side-channel: config.json and decoder.safetensors


@dataclass
class Stage:
    name: str
    recipe: Recipe
    seconds: float  # its time budget on one GPU
    start: str | None = None  # the earlier stage it continues (JSON "from"); None: the plain base
    note: str = ""  # where it is recorded (docs)

    def output(self, out: Path) -> Path:
        """What a later stage continues: a LoRA's adapter/, a whole decoder's model/."""
        return out / self.name / ("adapter" if self.recipe.adapter.name == "lora" else "model")


@dataclass
class Merge:
    a: str
    b: str
    t: float = 0.5
    name: str = "merged"

    def __post_init__(self) -> None:
        if not 0.0 <= self.t <= 1.0:
            raise ValueError(f"merge: t must lie in [0, 1], got {self.t}")


@dataclass
class StagedRecipe:
    stages: list[Stage]
    merge: Merge | None = None
    description: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for s in self.stages:
            if s.name in seen or s.name in (RESULT, self.merge.name if self.merge else None):
                raise ValueError(f"stage name {s.name!r} is used twice")
            if s.start is not None and s.start not in seen:
                raise ValueError(f"stage {s.name!r} continues {s.start!r}, which is not an earlier stage")
            if s.seconds <= 0:
                raise ValueError(f"stage {s.name!r}: seconds must be positive, got {s.seconds}")
            seen.add(s.name)
        if self.merge and not {self.merge.a, self.merge.b} <= seen:
            raise ValueError(f"merge: {self.merge.a!r} and {self.merge.b!r} must both be stages")

    @property
    def total_seconds(self) -> float:
        return sum(s.seconds for s in self.stages)

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)

    def next_stages(self, out: Path, seconds: float, setup: float = 30.0) -> list[str]:
        """The stages a machine holding OUT's finished stages can run next within `seconds` (each also costs `setup`),
        in order, at least one: from the first unfinished stage that continues a finished one (else the first that
        starts from the base). For machines lent a few minutes per command, which hold only the stage the next one
        continues."""
        done = {s.name for s in self.stages if (out / s.name / DONE_FILE).is_file()}
        ready = [i for i, s in enumerate(self.stages) if s.name not in done and (s.start is None or s.start in done)]
        if not ready:
            return []
        # a continuation of what is there before a fresh start: the machine holds the stages it continues, no others
        first = next((i for i in ready if self.stages[i].start is not None), ready[0])
        names, used = [], 0.0
        for s in self.stages[first:]:
            if s.name in done or (s.start is not None and s.start not in done):
                break
            if names and used + s.seconds + setup > seconds:
                break
            names.append(s.name)
            done.add(s.name)  # what the stages after it may continue
            used += s.seconds + setup
        return names


def staged_from(data: dict) -> StagedRecipe:
    """A `StagedRecipe` from its JSON: named `recipes`, and stages naming one with `set` overrides of its fields.

    `extends`: a staged preset (or file) whose recipes, stages and merge this one takes; a top-level `set`: fields
    set in every stage's recipe (a stage's own `set` still wins)."""
    if "extends" in data:
        data = {**read_config(data["extends"]), **{k: v for k, v in data.items() if k != "extends"}}
    recipes, plugins, every = data.get("recipes", {}), data.get("plugins", []), data.get("set", {})
    stages = []
    for s in data["stages"]:
        if s.get("recipe") not in recipes:
            raise ValueError(f"stage {s.get('name')!r}: unknown recipe {s.get('recipe')!r}; known: {', '.join(recipes)}")
        try:
            recipe = recipe_from({"plugins": plugins, **recipes[s["recipe"]], **every, **s.get("set", {})})
        except ValueError as err:
            raise ValueError(f"stage {s['name']!r}: {err}") from None
        stages.append(Stage(s["name"], recipe, s["seconds"], s.get("from"), s.get("note", "")))
    merge = Merge(**data["merge"]) if data.get("merge") else None
    return StagedRecipe(stages, merge, data.get("description", ""))


def run_stages(staged: StagedRecipe, out: Path, base: Path | None = None, only: str | None = None,
               device: str = "cuda", workers: int = 0, overrides: dict[str, Any] | None = None,
               make_example: Callable | None = None) -> Path | None:
    """Run the stages not done yet (or `only` that one, or "merge"), then the merge; returns OUT/side-channel once
    written. overrides: recipe fields set in every stage (e.g. a smaller batch)."""
    names = [s.name for s in staged.stages] + (["merge"] if staged.merge else [])
    if only is not None and only not in names:
        raise ValueError(f"no stage {only!r}; stages: {', '.join(names)}")
    fingerprint = base_fingerprint(base)  # what every stage here is fitted to
    for s in staged.stages:
        if only not in (None, s.name):
            continue
        if (out / s.name / DONE_FILE).is_file():
            print(f"stage {s.name}: done, skipped", flush=True)
            continue
        init = staged.stage(s.start).output(out) if s.start else None
        if init is not None:
            if not (out / s.start / DONE_FILE).is_file():
                raise ValueError(f"stage {s.name!r} continues {s.start!r}: run that stage first")
            check_same_base(out / s.start, fingerprint)
        print(f"stage {s.name}: {s.seconds:g} s from {s.start or 'the base'}", flush=True)
        recipe = replace(s.recipe, **overrides) if overrides else s.recipe
        train_side_channel(out / s.name, recipe, base, init, device, s.seconds, workers, make_example=make_example,
                           fingerprint=fingerprint)
    m = staged.merge
    if m is None or only not in (None, "merge"):
        return None
    if not all((out / n / DONE_FILE).is_file() for n in (m.a, m.b)):
        print(f"merge: waits for stages {m.a} and {m.b}", flush=True)
        return None
    for n in (m.a, m.b):
        check_same_base(out / n, fingerprint)
    whole = interpolate_side_channels(base, out / m.a / "model", out / m.b / "model", m.t, out / m.name / "model")
    print(f"merge: {1 - m.t:g} x {m.a} + {m.t:g} x {m.b} -> {out / RESULT}", flush=True)
    return save_decoder_side_channel(whole, out / RESULT)
