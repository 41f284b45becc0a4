"""A plain HF decoder checkpoint (Qwen2, Qwen2.5, Qwen3, Llama): `model.*`, `lm_head.*`; no audio front.

The catch-all: any config.json with a decoder's fields and no other layout. A session needs an audio
front, so such a model runs the engine and the decoders on token input only (and `ticktock calibrate`).
"""

from __future__ import annotations

from ..config import ModelConfig
from . import Layout
from ._hf import decoder_config, rename_decoder


class HFDecoderLayout(Layout):
    name = "hf-decoder"
    priority = 90

    def detect(self, raw: dict) -> bool:
        return "hidden_size" in raw and "num_hidden_layers" in raw

    def config(self, raw: dict, keys: set[str]) -> ModelConfig:
        return ModelConfig(decoder_config(raw, keys, ""), None)

    def rename(self, key: str) -> str | None:
        return rename_decoder(key, "")


LAYOUT = HFDecoderLayout()
