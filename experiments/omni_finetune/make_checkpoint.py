"""A small random-init Qwen2.5-Omni thinker checkpoint folder, built with transformers' own classes.

    python experiments/omni_finetune/make_checkpoint.py OUT

* audio tower: Whisper-tiny-sized (d_model 384, 4 layers, 6 heads, ffn 1536), 128 mel bins, 2 s windows;
* LM: a Qwen2.5 of about ticktock-tiny's size (width 384, 6 layers, 6 heads / 2 KV heads, untied head);
* vision: the smallest the config allows (never loaded by ticktock);
* tokenizer.json: a byte-level BPE trained on the synthetic world's texts, then Qwen2.5-Omni's special
  tokens after the BPE ids and the embedding table padded past them, as the published checkpoint has them.

`build` takes other sizes (tests/test_omni_finetune.py builds a tiny one with it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

# Qwen2.5-Omni's special tokens (those of its chat, audio and vision, FIM and tools): the shipped
# `qwen2.5-omni-thinker` protocol preset maps ticktock's protocol onto some of them
QWEN_OMNI_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>",
                      "<|IMAGE|>", "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>", "<tool_call>", "</tool_call>",
                      "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>",
                      "<|file_sep|>"]
AUDIO = dict(num_mel_bins=128, d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536,
             n_window=100, max_source_positions=1500)
TEXT = dict(hidden_size=384, intermediate_size=1152, num_hidden_layers=6, num_attention_heads=6,
            num_key_value_heads=2, tie_word_embeddings=False)
VISION = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, fullatt_block_indexes=[0], patch_size=2,
              spatial_merge_size=1, temporal_patch_size=1, window_size=4)


def world_tokenizer(bpe_size: int, specials: list[str], texts: list[str] | None = None) -> Tokenizer:
    """Byte-level BPE on the world's texts (as `ticktock.model.tokenizer.train_tokenizer`), `specials` after it."""
    if texts is None:
        from ticktock.scenarios import corpus_texts
        from ticktock.train.examples import TRANSCRIBE_SYSTEM

        texts = corpus_texts() + [TRANSCRIBE_SYSTEM]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=bpe_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer)
    tok.add_special_tokens(specials)
    return tok


def rope(theta: float, head_dim: int) -> dict:
    """The text config's RoPE fields (multimodal sections over head_dim / 2), as this transformers spells them."""
    half = head_dim // 2
    section = [half - 2 * (3 * half // 8), 3 * half // 8, 3 * half // 8]
    if int(transformers.__version__.split(".")[0]) >= 5:
        return {"rope_parameters": {"rope_type": "default", "rope_theta": theta, "mrope_section": section}}
    return {"rope_theta": theta, "rope_scaling": {"rope_type": "default", "type": "default", "mrope_section": section}}


def build(out: Path, audio: dict = AUDIO, text: dict = TEXT, bpe_size: int = 2048, seed: int = 0,
          texts: list[str] | None = None, specials: list[str] = QWEN_OMNI_SPECIALS) -> Path:
    """Write the checkpoint folder `out` (config.json, model.safetensors, tokenizer.json); returns it.
    texts: the tokenizer's corpus (default: the world's); specials: its special tokens (those the config
    names must be among them)."""
    torch.manual_seed(seed)
    tok = world_tokenizer(bpe_size, specials, texts)
    ids = {s: tok.token_to_id(s) for s in specials}
    vocab = -(-tok.get_vocab_size() // 64) * 64  # padded past the tokenizer, as real checkpoints are
    width = text["hidden_size"]
    cfg = transformers.Qwen2_5OmniThinkerConfig(
        audio_config={**audio, "output_dim": width},
        vision_config={**VISION, "out_hidden_size": width},
        text_config={**text, "vocab_size": vocab, **rope(1e6, width // text["num_attention_heads"])},
        audio_token_index=ids["<|AUDIO|>"], audio_start_token_id=ids["<|audio_bos|>"],
        audio_end_token_id=ids["<|audio_eos|>"], image_token_index=ids["<|IMAGE|>"],
        video_token_index=ids["<|VIDEO|>"], vision_start_token_id=ids["<|vision_bos|>"],
        vision_end_token_id=ids["<|vision_eos|>"])
    model = transformers.Qwen2_5OmniThinkerForConditionalGeneration(cfg)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save(str(out / "tokenizer.json"))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_checkpoint.py OUT")
    print(build(Path(sys.argv[1])))
