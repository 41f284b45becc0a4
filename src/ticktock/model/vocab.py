"""Adding special tokens to a model and its tokenizer: the protocol tokens a checkpoint's vocabulary lacks."""

from __future__ import annotations

import torch
from torch import nn

from .duplex import DuplexLM


@torch.no_grad()
def add_tokens(model: DuplexLM, tokenizer, tokens: list[str]) -> list[str]:
    """Add the `tokens` the tokenizer lacks as special tokens; returns those added.

    Their ids follow the tokenizer's; the embedding and the LM head grow to cover them (a checkpoint whose
    table is padded past its tokenizer may already have the rows). Every new token's rows start at the mean
    of the tokenizer's existing rows, a token the model has no reason to prefer or avoid; ids past the
    tokenizer stay masked (`DecoderConfig.tokenizer_vocab`).
    """
    missing = [t for t in dict.fromkeys(tokens) if tokenizer.token_to_id(t) is None]
    if not missing:
        return []
    known = tokenizer.get_vocab_size()
    tokenizer.add_special_tokens(missing)
    ids = torch.tensor([tokenizer.token_to_id(t) for t in missing])
    lm, cfg = model.lm, model.cfg.decoder
    rows = max(cfg.vocab_size, int(ids.max()) + 1)
    embed = lm.model.embed_tokens
    if rows > cfg.vocab_size:
        grown = nn.Embedding(rows, embed.embedding_dim, device=embed.weight.device, dtype=embed.weight.dtype)
        grown.weight[: cfg.vocab_size] = embed.weight
        lm.model.embed_tokens = embed = grown
    embed.weight[ids] = embed.weight[:known].mean(0)
    if cfg.tie_word_embeddings:
        lm.lm_head.weight = embed.weight
    else:
        head = lm.lm_head
        if rows > cfg.vocab_size:
            grown = nn.Linear(head.in_features, rows, bias=False, device=head.weight.device, dtype=head.weight.dtype)
            grown.weight[: cfg.vocab_size] = head.weight
            lm.lm_head = head = grown
        head.weight[ids] = head.weight[:known].mean(0)
    cfg.vocab_size = rows
    real = tokenizer.get_vocab_size()
    cfg.tokenizer_vocab = real if real < rows else None
    return missing
