"""Qwen2.5-Omni: its thinker (audio encoder + Qwen2.5 LM), from a full checkpoint or a thinker-only one.

Detected by config.json `model_type`: "qwen2_5_omni" (the published Qwen/Qwen2.5-Omni-* checkpoints,
`thinker_config` inside, tensors `thinker.*`, `talker.*`, `token2wav.*`) or "qwen2_5_omni_thinker"
(`Qwen2_5OmniThinkerForConditionalGeneration.save_pretrained`, tensors without the `thinker.` prefix).
Loaded: `audio_tower.*` (the audio tower) and `model.*` / `lm_head.*` (the LM). Not loaded: `visual.*`
(vision), `talker.*` and `token2wav.*` (speech output), `audio_tower.audio_bos_eos_token` (unused by the
thinker's forward).

The audio tower (HF `Qwen2_5OmniAudioEncoder`): 128-bin Whisper log-mel (100 Hz) -> conv stem (50 Hz) ->
sinusoidal positions -> Whisper layers with attention inside windows of `2 * n_window` frames (2 s) ->
average pooling by 2 (25 Hz) -> LayerNorm -> projection to the LM width: 25 embeddings per second.

Streaming (an assumption: the thinker was not trained on 1 s units): HF encodes a clip in independent 2 s
windows. Unit u's embeddings are HF's encoding of all audio heard so far, restricted to unit u: the
window holding u is encoded from its start to u's end (units u-1 and u for the second second of a
window, u alone for the first), so every unit sees at most one unit of left context and never the
future. The RoPE is the thinker's multimodal one reduced to 1-D (audio and text only: see `_hf.rope_theta`).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...audio.whisper_mel import MelFloor, WhisperMelStream
from ..config import ModelConfig
from ..whisper import WhisperEncoderLayer, check_gelu, conv_out_len, sinusoids
from . import Layout
from ._hf import decoder_config, rename_decoder

TOWER_KIND = "qwen2.5-omni-audio"
TOWER_FIELDS = ("num_mel_bins", "d_model", "encoder_layers", "encoder_attention_heads", "encoder_ffn_dim",
                "n_window", "output_dim", "max_source_positions")


def pooled_len(frames: int) -> int:
    """Embeddings a window of `frames` log-mel frames gives (conv stem, then pairs averaged)."""
    return 0 if frames <= 0 else (conv_out_len(frames) - 2) // 2 + 1


class QwenOmniAudioTower(nn.Module):
    """HF `Qwen2_5OmniAudioEncoder` (same parameter names), one window at a time."""

    def __init__(self, spec: dict):
        super().__init__()
        check_gelu(spec)
        self.spec = {k: spec[k] for k in ("kind", *TOWER_FIELDS)}
        d, self.n_mels, self.n_window = spec["d_model"], spec["num_mel_bins"], spec["n_window"]
        self.conv1 = nn.Conv1d(self.n_mels, d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.layers = nn.ModuleList(WhisperEncoderLayer(d, spec["encoder_attention_heads"], spec["encoder_ffn_dim"])
                                    for _ in range(spec["encoder_layers"]))
        self.ln_post = nn.LayerNorm(d)
        self.proj = nn.Linear(d, spec["output_dim"])
        self._pos: torch.Tensor | None = None  # sinusoids, made on first use (not a checkpoint tensor)

    def positions(self, n: int, like: torch.Tensor) -> torch.Tensor:
        if self._pos is None or self._pos.device != like.device:
            self._pos = sinusoids(self.spec["max_source_positions"], self.spec["d_model"]).to(like.device)
        return self._pos[:n].to(like.dtype)

    def encode_window(self, mel: torch.Tensor) -> torch.Tensor:
        """mel (T, n_mels), one window (T <= 2 * n_window) -> (pooled_len(T), output_dim)."""
        return self.encode(mel[None])[0]

    def encode(self, mel: torch.Tensor) -> torch.Tensor:
        """mel (N, T, n_mels), N windows of T <= 2 * n_window frames each -> (N, pooled_len(T), output_dim)."""
        assert mel.dim() == 3 and mel.shape[2] == self.n_mels and 0 < mel.shape[1] <= 2 * self.n_window, \
            f"windows are (N, T <= {2 * self.n_window}, {self.n_mels}) log-mel, got {tuple(mel.shape)}"
        x = F.gelu(self.conv1(mel.transpose(1, 2)))
        x = F.gelu(self.conv2(x)).transpose(1, 2)  # (N, T', d)
        x = x + self.positions(x.shape[1], x)
        for layer in self.layers:
            x = layer(x)[0]
        n = pooled_len(mel.shape[1])
        x = (x[:, 0:2 * n:2] + x[:, 1:2 * n:2]) / 2  # (N, n, d): pairs averaged
        return self.proj(self.ln_post(x))

    def encode_units(self, mel: torch.Tensor, first_unit: torch.Tensor) -> torch.Tensor:
        """Training's batched, differentiable twin of `QwenOmniStream.push` over a window of units.

        mel (B, 1 + U, F, n_mels): the log-mel of the unit before the window, then of its U units, each as
        the stream computes it; first_unit (B,) long: the window's first unit's index in its session (the
        stream's 2 s windows start at even units for 1 s units). -> (B, U * E, output_dim), unit u's E
        embeddings the tower's encoding of its window from the window's start to u's end, restricted to u.
        """
        b, n, f, _ = mel.shape
        per_window = 2 * self.n_window // f
        assert per_window * f == 2 * self.n_window and per_window <= 2, \
            f"units of {f} frames: one unit of context covers windows of 2 units at most, not {per_window}"
        u = n - 1
        index = first_unit[:, None] + torch.arange(u, device=mel.device)  # (B, U) session unit indices
        e = pooled_len(f)
        out = mel.new_zeros(b, u, e, self.spec["output_dim"])
        for held in range(per_window):  # units preceded by `held` units of their window
            pick = index % per_window == held  # (B, U)
            if not pick.any():
                continue
            frames = torch.cat([mel[:, k:k + u][pick] for k in range(1 - held, 2)], dim=1)  # (N, (held+1) F, n)
            out = out.index_put((pick,), self.encode(frames)[:, pooled_len(held * f):].to(out.dtype))
        return out.reshape(b, u * e, -1)

    def streaming(self, chunk_samples: int) -> "QwenOmniStream":
        return QwenOmniStream(self, chunk_samples)


class QwenOmniStream:
    """A session's audio front for the thinker: chunk (16 kHz) -> (E, D) embeddings (module doc: streaming)."""

    def __init__(self, tower: QwenOmniAudioTower, chunk_samples: int, floor: MelFloor | None = None):
        self.tower, self.chunk_samples = tower, chunk_samples
        self.frames = chunk_samples // 160
        self.window = 2 * tower.n_window
        if self.window % self.frames:
            raise ValueError(f"units of {self.frames} log-mel frames do not tile the tower's {self.window}-frame "
                             "windows; use a unit length that divides it")
        # HF's extractor floors at the clip's max - 8: here the running max of what was heard (<= 30 s)
        self.mel = WhisperMelStream(tower.n_mels, chunk_samples, 0, floor or MelFloor())
        self.silence = np.zeros(chunk_samples, dtype=np.float32)
        self.reset()

    def reset(self) -> None:
        self.mel.reset()
        self.held = torch.zeros(0, self.tower.n_mels)  # log-mel of the current window so far

    def _embed(self, mel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        held = self.held if self.held.shape[0] < self.window else self.held[:0]
        frames = torch.cat([held, mel])
        p = next(self.tower.parameters())
        out = self.tower.encode_window(frames.to(p.device, p.dtype))
        return out[pooled_len(held.shape[0]):], frames

    @torch.no_grad()
    def silence_hypothesis(self) -> torch.Tensor:
        return self._embed(self.mel.features(self.silence, commit=False))[0]

    @torch.no_grad()
    def push(self, chunk: np.ndarray) -> torch.Tensor:
        emb, self.held = self._embed(self.mel.features(chunk))
        return emb


class QwenOmniLayout(Layout):
    name = "qwen2.5-omni-thinker"
    protocol = "qwen2.5-omni-thinker"

    def detect(self, raw: dict) -> bool:
        return raw.get("model_type") in ("qwen2_5_omni", "qwen2_5_omni_thinker")

    @staticmethod
    def _thinker(raw: dict) -> dict:
        return raw["thinker_config"] if raw.get("model_type") == "qwen2_5_omni" else raw

    def config(self, raw: dict, keys: set[str]) -> ModelConfig:
        th = self._thinker(raw)
        dec = decoder_config(th["text_config"], keys, "thinker." if raw.get("model_type") == "qwen2_5_omni" else "")
        a = th["audio_config"]
        tower = {"kind": TOWER_KIND, **{k: a[k] for k in TOWER_FIELDS},
                 "activation_function": a.get("activation_function", "gelu")}
        if tower["output_dim"] != dec.hidden_size:
            raise ValueError(f"audio tower output {tower['output_dim']} != LM width {dec.hidden_size}")
        return ModelConfig(dec, None, tower)

    def rename(self, key: str) -> str | None:
        rest = key.removeprefix("thinker.")  # full checkpoints nest the thinker; its other parts are not loaded
        if rest.startswith("audio_tower."):
            return None if rest.startswith("audio_tower.audio_bos_eos_token") else "audio." + rest[len("audio_tower."):]
        return rename_decoder(rest, "")


LAYOUT = QwenOmniLayout()
TOWERS = {TOWER_KIND: QwenOmniAudioTower}
