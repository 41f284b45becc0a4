"""A base-model recipe (`ticktock train base --config`): the model it builds, what is rendered, how sessions are
drawn and the optimiser's settings. Written once, as this dataclass; stored as JSON (`presets/base/`).

Every check of what goes together is in `__post_init__`, so a preset, a `--config` file and a command line's
`--set KEY=VALUE` are refused the same way, in one line, before anything loads.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from ..model.config import PRESETS as MODEL_PRESETS
from .config_file import read_config
from .data import DATA_PRESETS, TrainingData
from .trainer import TrainConfig

PRESETS = Path(__file__).parent / "presets" / "base"
_TYPES = {"int": (int, "an integer"), "float": (float, "a number"), "str": (str, "a name or path")}  # by annotation
_WEIGHTS = ("family_weights", "reply_weights")


@dataclass
class BaseRecipe:
    model: str = "tiny"  # the model preset built when there is no --init (`model.config.PRESETS`)
    init_decoder: str | None = None  # start the decoder (and tokenizer) from this model folder, fresh audio encoder
    audio_layers: int | None = None  # the audio encoder's depth (None: the init's or preset's); deeper than an
    # --init's: the added layers start as the identity (`model.deepen`), so training starts from its behaviour
    decoder_layers: int | None = None  # the decoder's depth when continuing an --init (None: the init's); deeper
    # than the init's: identity blocks interleaved (`model.deepen`)
    data: str = "espeak"  # what is rendered: espeak or multi-engine (`train.data`)
    read_share: float | None = None  # examples whose requests are read as text (`train.read_requests`); None: data's
    transcribe_share: float = 0.3  # share of listening pre-training examples
    word_weight: float = 0.5  # the encoder's frame-level word objective (0: off; ticktock's own encoder only)
    family_weights: dict[str, float] | None = None  # over-sampled task families, e.g. {"short_qa": 2} (others 1)
    reply_weights: dict[str, float] | None = None  # over-sampled sessions whose replies say a word, e.g. {"minus": 6}
    max_offset: int = 3000  # random logical-position offsets after the prefix, in [0, N): long sessions reach 10,000
    max_len: int = 512  # tokens per training window
    steps: int = 20000  # the cosine runs over whichever ends first: steps or --time-budget
    batch: int = 64
    lr: float = 1.5e-3
    warmup: int = 300  # steps of linear learning-rate warm-up
    buffer: int = 40000  # replay buffer: the newest N examples (a long-session one is ~300 KB)
    seed: int = 0

    def __post_init__(self) -> None:
        from .base import parse_family_weights, parse_reply_weights

        self._check_types()
        # a dict (JSON) or its command-line form NAME=W,... (`--set`): both parsed, so both are checked
        for name, parse in zip(_WEIGHTS, (parse_family_weights, parse_reply_weights)):
            value = getattr(self, name)
            if isinstance(value, dict):
                value = ",".join(f"{k}={v}" for k, v in value.items())
            setattr(self, name, parse(value))
        if self.model not in MODEL_PRESETS:
            raise ValueError(f"unknown model preset {self.model!r}; known: {', '.join(MODEL_PRESETS)}")
        if self.data not in DATA_PRESETS:
            raise ValueError(f"data must be one of {', '.join(DATA_PRESETS)}, got {self.data!r}")
        if MODEL_PRESETS[self.model].tower is not None and self.word_weight > 0:
            raise ValueError(f"word_weight {self.word_weight}: the word-frame objective trains ticktock's own audio "
                             f"encoder; the {self.model} audio tower trains through the LM's loss alone: set it to 0")
        if not 0 <= self.transcribe_share <= 1 or self.word_weight < 0:
            raise ValueError("transcribe_share must be within [0, 1] and word_weight non-negative")
        if self.read_share is not None and not 0 <= self.read_share <= 1:
            raise ValueError(f"read_share must be within [0, 1] (or null: the data preset's), got {self.read_share}")
        if min(self.steps, self.batch, self.warmup, self.max_len, self.max_offset) < 1 or self.lr <= 0:
            raise ValueError("steps, batch, warmup, max_len and max_offset must be at least 1 and lr positive")
        if self.audio_layers is not None and self.audio_layers < 1:
            raise ValueError(f"audio_layers must be at least 1 (or null: the model's own), got {self.audio_layers}")
        if self.audio_layers is not None and MODEL_PRESETS[self.model].tower is not None:
            raise ValueError(f"audio_layers sets ticktock's own audio encoder's depth; the {self.model} preset has an "
                             "audio tower: leave it unset")
        if self.decoder_layers is not None and self.decoder_layers < 1:
            raise ValueError(f"decoder_layers must be at least 1 (or null: the init's own), got {self.decoder_layers}")
        if self.buffer < self.batch:
            raise ValueError(f"buffer ({self.buffer}) must hold at least a batch ({self.batch})")

    def _check_types(self) -> None:
        """Numbers and names are what their annotations say (an int is a float too)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _WEIGHTS:
                kind, what = (dict, str, type(None)), "a dict or NAME=W,..."
            else:
                kind, what = _TYPES[f.type.removesuffix(" | None")]
                if value is None and f.type.endswith("| None"):
                    continue
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                setattr(self, f.name, value := float(value))
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"{f.name} must be {what}, got {value!r}")

    def training_data(self) -> TrainingData:
        """The data preset, with the recipe's `read_share` where it sets one."""
        data = DATA_PRESETS[self.data]
        return data if self.read_share is None else replace(data, read_share=self.read_share)

    def check_start(self, init: Path | None, protocol: str | None) -> None:
        """What the recipe cannot say alone: the model it starts from."""
        if protocol is not None and init is None:
            raise ValueError("--protocol maps a checkpoint's tokens: it needs --init")
        if init is not None and self.init_decoder is not None:
            raise ValueError("init_decoder starts a fresh audio encoder under a donor decoder: drop it or --init")
        if init is None and self.decoder_layers is not None:
            raise ValueError("decoder_layers deepens a model continued with --init; a new model takes its preset's depth")

    def train_config(self, time_budget_s: float = 1e9, workers: int = 0) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch=self.batch, lr=self.lr, warmup=self.warmup, max_len=self.max_len,
                           time_budget_s=time_budget_s, buffer=self.buffer, workers=workers, seed=self.seed)

    def to_dict(self) -> dict:
        return asdict(self)


def parse_set(items: list[str]) -> dict:
    """`--set KEY=VALUE ...` as recipe fields: a value is JSON where it parses (numbers, null) and text otherwise
    (a name, a path, NAME=W,...); an unknown key is a one-line error."""
    types = {f.name: f.type for f in fields(BaseRecipe)}
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or key not in types:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE with KEY one of {', '.join(types)}")
        if not types[key].startswith("str"):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass
        out[key] = value
    return out


def load_recipe(name_or_path: str | Path, overrides: dict | None = None) -> BaseRecipe:
    """A preset by name or a JSON file, with `overrides` (field -> value) on top; unknown keys refused in one line."""
    data = {k: v for k, v in read_config(name_or_path, PRESETS).items() if k != "description"}
    try:
        return BaseRecipe(**{**data, **(overrides or {})})
    except TypeError as err:
        raise ValueError(f"recipe: {err}") from None
