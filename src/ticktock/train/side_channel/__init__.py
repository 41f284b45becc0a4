"""`ticktock train side-channel`: teach the base model to transcribe into its own context (docs/design.md §4,
docs/side-channel-training.md).

A `Recipe` (`recipe.py`, JSON presets in `presets/`) names an adapter (`adapters.py`: a LoRA or the whole decoder),
example sources with shares (`sources/`: plain windows, memory examples as `a2t` leaves the cache, long sessions) and
loss terms with weights (`terms/`: the side channel's cross-entropy, distillation from the base, the pause hold,
memory and recall). `run.train_side_channel` runs one; a `StagedRecipe` (`stages.py`) chains runs and interpolates
two of them (`merge.py`), which is how the shipped side channel is rebuilt. Experiments add sources, terms and
adapters through `registry.py`.
"""

from __future__ import annotations


from .recipe import Recipe, read_config, recipe_from
from .registry import ADAPTERS, SOURCES, TERMS, register
from .run import train_side_channel
from .stages import StagedRecipe, run_stages, staged_from


def load_config(name_or_path: str) -> Recipe | StagedRecipe:
    """A preset by name or a JSON file: a staged recipe if it lists `stages` (or extends one), else one recipe."""
    data = read_config(name_or_path)
    return staged_from(data) if "stages" in data or "extends" in data else recipe_from(data)


__all__ = ["ADAPTERS", "SOURCES", "TERMS", "Recipe", "StagedRecipe", "load_config", "register",
           "run_stages", "train_side_channel"]
