"""Checkpoint layouts: how a checkpoint folder maps onto `DuplexLM` (the decoder + one audio front).

A layout is one small module in this package defining `LAYOUT` (a `Layout`) and, if its model has an
audio tower of its own, `TOWERS` ({kind: tower class}). Modules are found by name, so adding a layout
is adding a file (docs/models.md says what each needs).

    layout = detect_layout(json.load(open("config.json")))   # None: no layout recognises it
    cfg = layout.config(raw, keys)        # ModelConfig from the checkpoint's config and its tensor names
    layout.rename("thinker.model.layers.0.mlp.up_proj.weight")  # -> "lm.model.layers.0.mlp.up_proj.weight"
                                                                # None: a tensor a duplex session never uses

`model.io.load_model` reads only the tensors `rename` keeps, shard by shard, into the target dtype/device.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from torch import nn

from ..config import ModelConfig


class Layout:
    """One checkpoint family. Subclasses set `name`, `protocol` and override the three methods.

    protocol: the shipped protocol preset (`assets/protocols/<name>.json`) the model speaks by default,
    None for models that carry the special tokens ticktock's own protocol names.
    priority: detection order (lower first); catch-all layouts use a high number.
    """

    name: str = ""
    protocol: str | None = None
    priority: int = 50

    def detect(self, raw: dict) -> bool:
        raise NotImplementedError

    def config(self, raw: dict, keys: set[str]) -> ModelConfig:
        """The model's configuration from its config.json (`raw`) and the names of its stored tensors."""
        raise NotImplementedError

    def rename(self, key: str) -> str | None:
        """A checkpoint tensor's name in `DuplexLM`'s state dict; None: not loaded (vision, talker, TTS, ...)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<layout {self.name}>"


@lru_cache(maxsize=None)
def _modules() -> tuple:
    return tuple(importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)
                 if not m.name.startswith("_"))


def layouts() -> list[Layout]:
    """Every registered layout, in detection order."""
    return sorted((m.LAYOUT for m in _modules() if hasattr(m, "LAYOUT")), key=lambda lay: (lay.priority, lay.name))


def towers() -> dict[str, type[nn.Module]]:
    out: dict[str, type[nn.Module]] = {}
    for m in _modules():
        out.update(getattr(m, "TOWERS", {}))
    return out


def detect_layout(raw: dict) -> Layout | None:
    """The layout of a checkpoint whose config.json holds `raw`; None when no layout recognises it."""
    for lay in layouts():
        if lay.detect(raw):
            return lay
    return None


def build_tower(spec: dict) -> nn.Module:
    """The audio tower `spec["kind"]` names, with the shape the rest of `spec` gives."""
    known = towers()
    if spec.get("kind") not in known:
        raise ValueError(f"unknown audio tower {spec.get('kind')!r}; known: {', '.join(sorted(known))}")
    return known[spec["kind"]](spec)


__all__ = ["Layout", "build_tower", "detect_layout", "layouts", "towers"]
