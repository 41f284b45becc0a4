"""ticktock's own model folder: config.json `{"ticktock": {...}}`, tensors named as `DuplexLM`'s state dict."""

from __future__ import annotations

from ..config import ModelConfig
from . import Layout


class TicktockLayout(Layout):
    name = "ticktock"
    priority = 0

    def detect(self, raw: dict) -> bool:
        return "ticktock" in raw

    def config(self, raw: dict, keys: set[str]) -> ModelConfig:
        return ModelConfig.from_dict(raw["ticktock"])

    def rename(self, key: str) -> str | None:
        return key


LAYOUT = TicktockLayout()
