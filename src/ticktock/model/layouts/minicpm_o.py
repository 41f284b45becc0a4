"""MiniCPM-o (4.5; 2.6 loads the same way): Whisper encoder `apm`, `audio_projection_layer`, pooling, LM `llm`.

Read from the published modelling code (OpenBMB `MiniCPMO45/modeling_minicpmo*.py`, `configuration_minicpmo.py`;
vLLM's `minicpmo.py`), not from a checkpoint (no weights are downloaded here):

* config.json: `model_type` "minicpmo"; the LM's fields at the top level (`MiniCPMOConfig` extends
  `Qwen3Config`; 2.6's extends `Qwen2Config`); `audio_config` a `WhisperConfig`; `audio_pool_step`
  (5 in 4.5, 2 in 2.6: taken from the config, else 5 for a Qwen3 LM and 2 for a Qwen2 one);
  `audio_chunk_length` (1.0 s: the encoder's attention block).
* tensors: `llm.model.*`, `llm.lm_head.weight` (a Qwen3ForCausalLM: QK-norm, no q/k/v bias, head_dim 128);
  `apm.*` (a WhisperEncoder: conv1, conv2, embed_positions, layers, layer_norm);
  `audio_projection_layer.linear1/linear2` (Linear(ffn/4 -> D), ReLU, Linear(D -> D)).
  Not loaded: `vpm.*`, `resampler.*` (vision), `tts.*` (speech output).
* audio embeddings: apm's last hidden state (after its final LayerNorm) -> projection -> AvgPool1d(pool_step)
  over time: 100 log-mel frames (80 bins) -> 50 -> 10 per 1 s unit with pool_step 5.
* streaming (as `get_audio_embedding_streaming`): each unit's 50 encoder frames attend to themselves and
  to the cached keys/values of every earlier unit (block-causal, the offline `chunk_length=1` mask), their
  positions continue from the cache; the cache is dropped when it and the unit would reach
  `max_source_positions` (1500 = 30 s). The unit's conv stem reads 2 log-mel frames of left context and
  1 frame past the unit (the published code reads 2 and 2, its first chunk 35 ms longer); here the log-mel
  grid is delayed by 12.5 ms instead (`audio.whisper_mel`: lookahead 1), so a unit needs no future audio
  and the stream equals the offline block-causal encoding of the delayed signal exactly.
* log-mel floor: MiniCPM-o's streaming extractor uses a fixed log10 floor of -10 for the first 5 s, then
  `max - 8` over its buffer (<= 30 s); `MelFloor(-10, 8, 5, 30)` here, the max taken per unit heard.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...audio.io import SAMPLE_RATE
from ...audio.whisper_mel import MelFloor, WhisperMelStream
from ..config import ModelConfig
from ..whisper import WhisperEncoderLayer, check_gelu
from . import Layout
from ._hf import decoder_config, rename_decoder

TOWER_KIND = "minicpm-o-whisper"
WHISPER_FIELDS = ("num_mel_bins", "d_model", "encoder_layers", "encoder_attention_heads", "encoder_ffn_dim",
                  "max_source_positions")
MINICPM_FLOOR = MelFloor(fixed=-10.0, dynamic_range=8.0, dynamic_after_s=5.0, window_s=30.0)
CTX_FRAMES = 2  # log-mel frames of left context the conv stem reads


class WhisperApm(nn.Module):
    """HF `WhisperEncoder`'s parameters (`conv1`, `conv2`, `embed_positions`, `layers`, `layer_norm`)."""

    def __init__(self, spec: dict):
        super().__init__()
        d = spec["d_model"]
        self.conv1 = nn.Conv1d(spec["num_mel_bins"], d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(spec["max_source_positions"], d)
        self.layers = nn.ModuleList(WhisperEncoderLayer(d, spec["encoder_attention_heads"], spec["encoder_ffn_dim"])
                                    for _ in range(spec["encoder_layers"]))
        self.layer_norm = nn.LayerNorm(d)


class Projector(nn.Module):
    """MiniCPM-o's `MultiModalProjector`: Linear -> ReLU -> Linear."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.linear1 = nn.Linear(d_in, d_out)
        self.linear2 = nn.Linear(d_out, d_out)

    def forward(self, x):
        return self.linear2(F.relu(self.linear1(x)))


class MiniCPMAudioTower(nn.Module):
    """apm + audio_projection_layer + average pooling; encodes one unit against a cache of earlier units."""

    def __init__(self, spec: dict):
        super().__init__()
        check_gelu(spec)
        self.spec = dict(spec)
        self.n_mels, self.pool = spec["num_mel_bins"], spec["pool_step"]
        self.max_pos = spec["max_source_positions"]
        self.apm = WhisperApm(spec)
        self.audio_projection_layer = Projector(spec["encoder_ffn_dim"] // 4, spec["output_dim"])

    def encode_unit(self, mel: torch.Tensor, keep: slice, past: list | None, n_past: int
                    ) -> tuple[torch.Tensor, list]:
        """mel (T, n_mels): the unit's log-mel with its context frames; `keep`: the conv-stem frames that are the
        unit's; past: per layer (k, v) of earlier frames (None: none), at positions [0, n_past).

        Returns the unit's embeddings (frames // pool_step, D) and the layers' (k, v) with this unit appended.
        """
        apm = self.apm
        x = F.gelu(apm.conv1(mel.t()[None]))
        x = F.gelu(apm.conv2(x)).transpose(1, 2)[:, keep]  # (1, T', d)
        t = x.shape[1]
        assert n_past + t <= self.max_pos, f"encoder positions {n_past}+{t} exceed {self.max_pos}"
        x = x + apm.embed_positions.weight[n_past:n_past + t]
        kvs = []
        for i, layer in enumerate(apm.layers):
            x, kv = layer(x, past[i] if past else None)
            kvs.append(kv)
        x = self.audio_projection_layer(apm.layer_norm(x))  # (1, T', D)
        x = F.avg_pool1d(x.transpose(1, 2), self.pool, self.pool).transpose(1, 2)
        return x[0], kvs

    def streaming(self, chunk_samples: int) -> "MiniCPMStream":
        return MiniCPMStream(self, chunk_samples)


class MiniCPMStream:
    """A session's audio front for MiniCPM-o: chunk (16 kHz) -> (E, D) embeddings (module doc: streaming)."""

    def __init__(self, tower: MiniCPMAudioTower, chunk_samples: int, floor: MelFloor | None = None):
        block = int(round(tower.spec.get("chunk_length", 1.0) * SAMPLE_RATE))
        if chunk_samples != block:
            raise ValueError(f"MiniCPM-o's encoder attends in blocks of {block} samples; units of {chunk_samples} "
                             "samples do not match (set the protocol's chunk_seconds to its audio_chunk_length)")
        self.tower, self.chunk_samples = tower, chunk_samples
        self.frames = chunk_samples // 160
        self.mel = WhisperMelStream(tower.n_mels, chunk_samples, 1, floor or MINICPM_FLOOR)
        self.silence = np.zeros(chunk_samples, dtype=np.float32)
        self.reset()

    def reset(self) -> None:
        self.mel.reset()
        self.tail: torch.Tensor | None = None  # the last CTX_FRAMES log-mel frames of the previous unit
        self.past: list | None = None
        self.n_past = 0

    def _embed(self, chunk: np.ndarray, commit: bool) -> torch.Tensor:
        mel = self.mel.features(chunk, commit)  # (frames + 1, n_mels): the unit's frames and one past it
        if self.tail is None:  # the stream's first unit: the conv pads with zeros, as offline
            frames, keep = mel, slice(0, self.frames // 2)
        else:
            frames, keep = torch.cat([self.tail, mel]), slice(1, 1 + self.frames // 2)
        past, n_past = self.past, self.n_past
        if n_past + self.frames // 2 >= self.tower.max_pos:  # the published reset: a fresh encoder context
            past, n_past = None, 0
        p = next(self.tower.parameters())
        emb, kvs = self.tower.encode_unit(frames.to(p.device, p.dtype), keep, past, n_past)
        if commit:
            self.tail = mel[self.frames - CTX_FRAMES:self.frames]
            self.past, self.n_past = kvs, n_past + self.frames // 2
        return emb

    @torch.no_grad()
    def silence_hypothesis(self) -> torch.Tensor:
        return self._embed(self.silence, commit=False)

    @torch.no_grad()
    def push(self, chunk: np.ndarray) -> torch.Tensor:
        return self._embed(np.asarray(chunk, dtype=np.float32), commit=True)


class MiniCPMOLayout(Layout):
    name = "minicpm-o"
    protocol = "minicpm-o-4.5-duplex"

    def detect(self, raw: dict) -> bool:
        return raw.get("model_type") == "minicpmo"

    def config(self, raw: dict, keys: set[str]) -> ModelConfig:
        dec = decoder_config(raw, keys, "llm.")
        a = raw.get("audio_config")
        if raw.get("init_audio") is False or not a or "apm.conv1.weight" not in keys:
            raise ValueError("this MiniCPM-o checkpoint has no audio encoder (apm): a duplex session needs one")
        missing = [k for k in WHISPER_FIELDS[1:5] if k not in a]
        if missing:
            raise ValueError(f"MiniCPM-o audio_config lacks {missing}")
        tower = {"kind": TOWER_KIND, "num_mel_bins": a.get("num_mel_bins", 80),
                 "max_source_positions": a.get("max_source_positions", 1500),
                 **{k: a[k] for k in WHISPER_FIELDS[1:5]},
                 "activation_function": a.get("activation_function", "gelu"),
                 "pool_step": raw.get("audio_pool_step", 5 if dec.qk_norm else 2),
                 "chunk_length": float(raw.get("audio_chunk_length", 1.0)),
                 "output_dim": dec.hidden_size}
        return ModelConfig(dec, None, tower)

    def rename(self, key: str) -> str | None:
        if key.startswith(("apm.", "audio_projection_layer.")):
            return "audio." + key
        return rename_decoder(key, "llm.")


LAYOUT = MiniCPMOLayout()
TOWERS = {TOWER_KIND: MiniCPMAudioTower}
