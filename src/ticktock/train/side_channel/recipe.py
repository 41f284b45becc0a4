"""A side-channel recipe: what trains (adapter), on which examples (sources with shares), under which loss (terms
with weights), and the optimiser's settings. Written once, as these dataclasses; stored as JSON (`presets/`).

Every check of what goes together is in `__post_init__` (the sources' and terms' own ones too), so a preset, a
`--config` file and `dataclasses.replace` with a command line's overrides are all refused the same way, in one line.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config_file import read_config as read_json
from ..data import DATA_PRESETS
from ..trainer import TrainConfig
from .adapters import Adapter
from .examples import PLACEMENT_CHOICES
from .registry import ADAPTERS, SOURCES, TERMS, build
from .sources import Source
from .terms import Term

PRESETS = Path(__file__).parent / "presets"
EXACT_LONG_BUFFER = 1024  # exact long examples in the replay buffer: up to 10 minutes of audio (~19 MB) each


def spec(obj: Any) -> dict:
    """A registered dataclass as JSON: its name, then its fields."""
    return {"name": obj.name, **asdict(obj)}


@dataclass
class Recipe:
    sources: list[Source]
    terms: list[Term]
    adapter: Adapter = field(default_factory=lambda: ADAPTERS["lora"]())
    placement: str = "after_decision"  # after_decision | after_content | both (one drawn per example)
    delay_jitter: float = 0.0  # seconds: half the sessions use δ = 0.5 ± this, distillation only (`mixture`)
    family_weights: dict[str, float] | None = None  # over-sampled task families of short sessions (None: uniform)
    data: str = "espeak"  # how its sessions are rendered: a `train base` data preset (`train.data.DATA_PRESETS`)
    steps: int = 4000
    batch: int = 32
    lr: float = 5e-4  # the two new rows learn `row_lr_scale` times faster under a LoRA
    warmup: int = 100
    buffer: int = 40000  # replay buffer: the newest N examples
    seed: int = 0
    plugins: list[str] = field(default_factory=list)  # modules that register more sources, terms or adapters

    def __post_init__(self) -> None:
        for module in self.plugins:
            importlib.import_module(module)
        if isinstance(self.adapter, dict):
            self.adapter = build(ADAPTERS, "adapter", self.adapter)
        self.sources = [build(SOURCES, "source", s) if isinstance(s, dict) else s for s in self.sources]
        self.terms = [build(TERMS, "term", t) if isinstance(t, dict) else t for t in self.terms]
        names = [t.name for t in self.terms]
        if self.placement not in PLACEMENT_CHOICES:
            raise ValueError(f"placement must be one of {', '.join(PLACEMENT_CHOICES)}, got {self.placement!r}")
        if not self.sources or not math.isclose(sum(s.share for s in self.sources), 1.0, abs_tol=1e-6):
            raise ValueError(f"the sources' shares must sum to 1, got {[s.share for s in self.sources]}")
        if len(set(names)) != len(names):
            raise ValueError(f"a term is listed twice: {names}")
        memory = [s for s in self.sources if s.memory and s.share > 0]
        if memory and "memory" not in names:
            raise ValueError(f"source {memory[0].name!r} makes memory examples: add the 'memory' term")
        if "recall" in names and not memory:
            raise ValueError("the 'recall' term acts on memory examples: add a 'memory' or 'long' source")
        if any(getattr(s, "local_distill", 0) for s in self.sources) and "distill" not in names:
            raise ValueError("a source's local_distill distils memory examples: add the 'distill' term")
        if self.data not in DATA_PRESETS:
            raise ValueError(f"data must be one of {', '.join(DATA_PRESETS)}, got {self.data!r}")
        if self.delay_jitter < 0:
            raise ValueError(f"delay_jitter must be non-negative, got {self.delay_jitter}")
        if min(self.steps, self.batch, self.warmup) < 1 or self.lr <= 0:
            raise ValueError("steps, batch and warmup must be at least 1 and lr positive")
        if self.buffer < self.batch:
            raise ValueError(f"buffer ({self.buffer}) must hold at least a batch ({self.batch})")
        if any(s.name == "long" and s.layout == "exact" for s in memory) and self.buffer > EXACT_LONG_BUFFER:
            raise ValueError(f"exact long examples carry up to 10 minutes of audio (~19 MB each): buffer must be "
                             f"{EXACT_LONG_BUFFER} or less, got {self.buffer}")
        if self.family_weights is not None:
            from ..base import parse_family_weights

            parse_family_weights(",".join(f"{k}={v}" for k, v in self.family_weights.items()))

    @property
    def hold_tags(self) -> tuple[str, ...]:
        """The script tags of the units the `pause` term weighs (marked on every example)."""
        return next((t.tags for t in self.terms if t.name == "pause"), ("pause",))

    def train_config(self, time_budget_s: float = 1e9, workers: int = 0) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch=self.batch, lr=self.lr, warmup=self.warmup,
                           time_budget_s=time_budget_s, buffer=self.buffer, workers=workers, seed=self.seed)

    def to_dict(self) -> dict:
        return {**asdict(self), "adapter": spec(self.adapter), "sources": [spec(s) for s in self.sources],
                "terms": [spec(t) for t in self.terms]}


def read_config(name_or_path: str | Path) -> dict:
    """The JSON of a preset (by name: `presets/NAME.json`) or of a file."""
    return read_json(name_or_path, PRESETS)


def recipe_from(data: dict) -> Recipe:
    """A `Recipe` from its JSON; unknown keys are refused in one line."""
    try:
        return Recipe(**{k: v for k, v in data.items() if k != "description"})
    except TypeError as err:
        raise ValueError(f"recipe: {err}") from None
