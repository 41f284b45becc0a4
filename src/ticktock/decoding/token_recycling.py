"""Token Recycling (Luo et al. 2024, "Turning Trash into Treasure: Accelerating Inference
of Large Language Models with Token Recycling").

An adjacency matrix ``A`` ``(V, k)`` holds, per token, the top-k next tokens the model
last predicted after it. Every verification forward refreshes the rows of all its input
tokens (the root's last token and every draft node) from their logits, so candidates that
verification throws away are recycled; the matrix lives for the whole session (`reset`
clears it, so sessions are measured independently; the paper keeps it across queries). A draft is
a static tree grown breadth-first from the last committed token: a node whose rank path
(its sibling ranks from the root down) sums to ``s`` at depth ``d`` takes the top
``widths[d] >> s`` successors of its token. The default ``(8, 4, 2, 2, 1, 1)`` gives
26 nodes, depth 6.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import torch
from torch import Tensor

from ticktock.decoding.base import Decoder
from ticktock.decoding.draft import Draft
from ticktock.decoding.verify import Verdict


@dataclass
class TokenRecyclingDecoder(Decoder):
    name: ClassVar[str] = "tr"
    top_k: int = 8
    widths: tuple[int, ...] = (8, 4, 2, 2, 1, 1)  # children per node at each depth (rank sum 0)
    vocab_size: int | None = None  # None: taken from the first logits seen
    adjacency: Tensor | None = field(default=None, repr=False)  # (V, top_k) long
    known: Tensor | None = field(default=None, repr=False)  # (V,) bool: row filled yet

    def __post_init__(self) -> None:
        assert max(self.widths) <= self.top_k, f"widths {self.widths} exceed top_k={self.top_k}"
        self.template = tree_template(self.widths)  # (rank path, parent index) in BFS order
        if self.vocab_size is not None:
            self._init(self.vocab_size)

    def _init(self, vocab: int) -> None:
        self.adjacency = torch.zeros(vocab, self.top_k, dtype=torch.long)
        self.known = torch.zeros(vocab, dtype=torch.bool)

    def reset(self) -> None:
        if self.adjacency is not None:
            self._init(self.adjacency.shape[0])

    def propose(self, history: list[int], max_len: int) -> Draft | None:
        if not history or self.adjacency is None or max_len <= 0:
            return None
        last = history[-1]
        if not (0 <= last < self.adjacency.shape[0]) or not self.known[last]:
            return None
        tokens: list[int] = []
        parents: list[int] = []
        where: list[int] = []  # template node -> draft node (-2 = dropped)
        rows: dict[int, list[int] | None] = {}  # token -> its successors, None if unknown
        for ranks, tpar in self.template:
            if len(tokens) >= max_len:
                break
            par = -1 if tpar < 0 else where[tpar]
            if par == -2:
                where.append(-2)
                continue
            src = last if par < 0 else tokens[par]
            if src not in rows:
                rows[src] = self.adjacency[src].tolist() if self.known[src] else None
            succ = rows[src]
            if succ is None:
                where.append(-2)
                continue
            where.append(len(tokens))
            tokens.append(succ[ranks[-1]])
            parents.append(par)
        return Draft(tokens, parents, source=["tr"] * len(tokens)) if tokens else None

    def observe(self, history: list[int], draft: Draft | None, logits: Tensor, verdict: Verdict) -> None:
        if self.adjacency is None:
            self._init(logits.shape[-1] if self.vocab_size is None else self.vocab_size)
        inputs = ([history[-1]] if history else []) + (draft.tokens if draft is not None else [])
        rows = logits[1:] if not history else logits  # row 0 belongs to history[-1]
        if not inputs:
            return
        top = rows.topk(self.top_k, dim=-1).indices.cpu()  # (m, top_k)
        idx = torch.tensor(inputs)
        self.adjacency[idx] = top  # a repeated token keeps its last row
        self.known[idx] = True


def tree_template(widths: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
    """BFS list of ``(rank path, parent position in this list or -1)``."""
    out: list[tuple[tuple[int, ...], int]] = []
    level: list[tuple[tuple[int, ...], int]] = [((), -1)]  # (rank path, own position)
    for w in widths:
        nxt = []
        for ranks, pos in level:
            for r in range(w >> sum(ranks)):
                nxt.append((ranks + (r,), len(out)))
                out.append((ranks + (r,), pos))
        level = nxt
    return out
