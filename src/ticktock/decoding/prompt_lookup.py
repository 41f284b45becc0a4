"""Prompt lookup decoding (Saxena 2023, "Prompt Lookup Decoding",
https://github.com/apoorvumang/prompt-lookup-decoding).

Match the longest suffix n-gram of the history (``max_ngram`` down to ``min_ngram``)
against its most recent earlier occurrence and propose the tokens that followed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ticktock.decoding.base import Decoder
from ticktock.decoding.draft import Draft


@dataclass
class PromptLookupDecoder(Decoder):
    name: ClassVar[str] = "pld"
    max_ngram: int = 3
    min_ngram: int = 1
    num_pred_tokens: int = 10

    def propose(self, history: list[int], max_len: int) -> Draft | None:
        k = min(self.num_pred_tokens, max_len)
        if k <= 0:
            return None
        for n in range(min(self.max_ngram, len(history) - 1), self.min_ngram - 1, -1):
            start = find_last(history, history[-n:], before=len(history) - n)
            if start is not None:
                follow = history[start + n : start + n + k]
                return Draft.chain(follow, source="pld")
        return None


def find_last(seq: list[int], pattern: list[int], before: int) -> int | None:
    """The largest ``j < before`` with ``seq[j : j + len(pattern)] == pattern``, else None."""
    n = len(pattern)
    first = pattern[0]
    for j in range(min(before, len(seq) - n + 1) - 1, -1, -1):
        if seq[j] == first and seq[j : j + n] == pattern:
            return j
    return None
