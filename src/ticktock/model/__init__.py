from .config import PRESETS, AudioEncoderConfig, DecoderConfig, ModelConfig, preset
from .duplex import DuplexLM
from .io import DEFAULT_MODEL, load_model, save_model

__all__ = ["PRESETS", "AudioEncoderConfig", "DecoderConfig", "ModelConfig", "preset", "DuplexLM",
           "DEFAULT_MODEL", "load_model", "save_model"]
