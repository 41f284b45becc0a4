"""Model configuration: the Qwen2-compatible decoder and the streaming audio encoder."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class DecoderConfig:
    """Field names follow HF `Qwen2Config`, so an HF config.json maps onto it directly."""

    vocab_size: int = 4096
    hidden_size: int = 256
    intermediate_size: int = 768
    num_hidden_layers: int = 6
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6
    attention_bias: bool = True  # Qwen2 has a bias on q/k/v; Llama has none
    tie_word_embeddings: bool = True
    max_position_embeddings: int = 32768
    # Ids >= this are padding of the embedding table (real checkpoints pad it past their tokenizer):
    # `Transformer.logits` masks them, so no engine or decoder ever samples or drafts one. None: all ids are real.
    tokenizer_vocab: int | None = None
    # Qwen3: RMSNorm over each head's dims on q and k, before RoPE (weights `q_norm`, `k_norm`). Off: Qwen2/Llama.
    qk_norm: bool = False
    # HF's `head_dim` where a config sets it (Qwen3: 128 whatever the width); None: hidden_size // heads.
    explicit_head_dim: int | None = None

    @property
    def head_dim(self) -> int:
        return self.explicit_head_dim or self.hidden_size // self.num_attention_heads


@dataclass
class AudioEncoderConfig:
    """log-mel (100 Hz) -> `embeds_per_chunk` embeddings per chunk, with one chunk of left context."""

    n_mels: int = 80
    frames_per_chunk: int = 100
    embeds_per_chunk: int = 10
    width: int = 192
    layers: int = 3
    heads: int = 4
    context_chunks: int = 1  # bounded left context: how many previous chunks the encoder sees
    # 0: one strided conv straight to the chunk rate (10 Hz). k > 0: the transformer runs at 100/k Hz
    # (finer time for hearing phones) and adjacent frames are merged to the chunk rate at the end.
    inner_stride: int = 0


@dataclass
class ModelConfig:
    """The decoder and one audio front: ticktock's own encoder (`audio`) or a published model's audio tower
    (`tower`: a plain dict whose "kind" names a tower in `model.layouts.TOWERS`, the rest its shape)."""

    decoder: DecoderConfig = field(default_factory=DecoderConfig)
    audio: AudioEncoderConfig | None = field(default_factory=AudioEncoderConfig)
    tower: dict | None = None

    def to_dict(self) -> dict:
        d = {"decoder": asdict(self.decoder), "audio": asdict(self.audio) if self.audio else None}
        if self.tower is not None:
            d["tower"] = dict(self.tower)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        audio = d.get("audio")
        tower = d.get("tower")
        return cls(DecoderConfig(**d["decoder"]), AudioEncoderConfig(**audio) if audio else None,
                   dict(tower) if tower else None)


PRESETS: dict[str, ModelConfig] = {
    # Unit tests: a few hundred k parameters, runs in milliseconds.
    "test": ModelConfig(
        DecoderConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2),
        AudioEncoderConfig(width=32, layers=1, heads=2),
    ),
    # The shipped default model (about 12 M parameters, 24 MB in fp16).
    "tiny": ModelConfig(
        DecoderConfig(vocab_size=2304, hidden_size=320, intermediate_size=960, num_hidden_layers=6,
                      num_attention_heads=5, num_key_value_heads=5),
        AudioEncoderConfig(width=256, layers=4, heads=4, inner_stride=5),
    ),
    # Qwen2.5-7B's decoder shape, for calibrating a 7B-class forward on a GPU (random weights).
    "qwen2.5-7b": ModelConfig(
        DecoderConfig(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                      num_attention_heads=28, num_key_value_heads=4, rope_theta=1e6,
                      tie_word_embeddings=False),
        None,
    ),
    # MiniCPM-o 4.5's LM (the Qwen3-8B decoder shape), the target of `ticktock model expand`: a GPU forward
    # costs what the 8B model costs. No QK-norm (a per-head norm cannot be made the identity); q/k/v biases,
    # which Qwen3 lacks, because the expanded ticktock-tiny needs them (their cost is negligible).
    "minicpm-o-4.5-lm": ModelConfig(
        DecoderConfig(vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                      num_attention_heads=32, num_key_value_heads=8, rope_theta=1e6, attention_bias=True,
                      tie_word_embeddings=False, max_position_embeddings=40960),
        None,
    ),
    # Full-size shapes of the published duplex models' parts a session runs (random weights; for `ticktock
    # calibrate --shape`): the decoder and the audio tower (docs/models.md). Qwen2.5-Omni-7B's thinker:
    # the Qwen2.5-7B LM and its 32-layer Whisper-large-style audio encoder (128 mel bins, 25 embeddings/s).
    "qwen2.5-omni-7b-thinker": ModelConfig(
        DecoderConfig(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                      num_attention_heads=28, num_key_value_heads=4, rope_theta=1e6, attention_bias=True,
                      tie_word_embeddings=False),
        None,
        {"kind": "qwen2.5-omni-audio", "num_mel_bins": 128, "d_model": 1280, "encoder_layers": 32,
         "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "n_window": 100, "output_dim": 3584,
         "max_source_positions": 1500},
    ),
    # MiniCPM-o 4.5: the Qwen3-8B LM (QK-norm, no q/k/v bias) and Whisper-medium (`apm`) with its projection
    # and pooling by 5 (10 embeddings/s). The vocabulary as "minicpm-o-4.5-lm" (Qwen3-8B's).
    "minicpm-o-4.5": ModelConfig(
        DecoderConfig(vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                      num_attention_heads=32, num_key_value_heads=8, rope_theta=1e6, attention_bias=False,
                      tie_word_embeddings=False, max_position_embeddings=40960, qk_norm=True),
        None,
        {"kind": "minicpm-o-whisper", "num_mel_bins": 80, "d_model": 1024, "encoder_layers": 24,
         "encoder_attention_heads": 16, "encoder_ffn_dim": 4096, "max_source_positions": 1500, "pool_step": 5,
         "chunk_length": 1.0, "output_dim": 4096},
    ),
    # ticktock-tiny's heads at 128 dims, twice as wide: a small `ticktock model expand` target for tests.
    "tiny-wide": ModelConfig(
        DecoderConfig(vocab_size=2304, hidden_size=640, intermediate_size=1280, num_hidden_layers=6,
                      num_attention_heads=5, num_key_value_heads=5),
        None,
    ),
}


def preset(name: str) -> ModelConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown model preset {name!r}; known: {', '.join(PRESETS)}")
    return ModelConfig.from_dict(PRESETS[name].to_dict())
