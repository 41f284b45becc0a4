"""A byte-level BPE tokenizer trained on the synthetic corpus, plus the protocol's special tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from ..protocol import SpecialTokens


def train_tokenizer(texts: Iterable[str], vocab_size: int = 4096, specials: SpecialTokens | None = None) -> Tokenizer:
    """Train a byte-level BPE on `texts`; special tokens take the first ids."""
    specials = specials or SpecialTokens()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials.all(),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer)
    return tok


def load_tokenizer(path: str | Path) -> Tokenizer:
    return Tokenizer.from_file(str(path))
