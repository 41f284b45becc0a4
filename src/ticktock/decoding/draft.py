"""The draft: a tree of proposed token ids hanging off the last committed position.

Node ``i`` holds ``tokens[i]`` and hangs below ``parents[i]`` (``-1`` = the root, i.e. the
last committed position). Nodes are topologically ordered (``parents[i] < i``) and siblings
carry distinct tokens, so a path of tokens names at most one node.

``probs`` (optional, ``(n, V)``) is, per node, the distribution ``q`` its token was drawn
from at its parent. Siblings count as drawn *without replacement*: a later sibling's token
was drawn from its row conditioned on differing from the earlier siblings' tokens
(`verify.verify_sampling` relies on this). ``probs=None`` means a deterministic draft.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor


@dataclass
class Draft:
    tokens: list[int]
    parents: list[int]  # -1 = child of the root
    probs: Tensor | None = None  # (n, V) draft distribution q of each node at its parent
    source: list[str] | None = None  # per-node label for statistics ('main', 'pool', ...)

    def __post_init__(self) -> None:
        n = len(self.tokens)
        assert len(self.parents) == n, f"parents: expected {n} entries, got {len(self.parents)}"
        seen: set[tuple[int, int]] = set()
        for i, (tok, par) in enumerate(zip(self.tokens, self.parents)):
            if not -1 <= par < i:
                raise ValueError(f"node {i}: parent {par} must be in [-1, {i}) (topological order)")
            if (par, tok) in seen:
                raise ValueError(f"node {i}: token {tok} repeats a sibling under parent {par}")
            seen.add((par, tok))
        if self.probs is not None:
            assert self.probs.dim() == 2 and self.probs.shape[0] == n, (
                f"probs: expected shape (n={n}, V), got {tuple(self.probs.shape)}"
            )
        if self.source is not None:
            assert len(self.source) == n, f"source: expected {n} labels, got {len(self.source)}"

    # ------------------------------------------------------------------ construction

    @classmethod
    def chain(
        cls,
        tokens: Sequence[int],
        probs: Tensor | None = None,  # (n, V)
        source: str | Sequence[str] | None = None,
    ) -> Draft:
        """A linear draft: each token is the child of the previous one."""
        tokens = [int(t) for t in tokens]
        labels = [source] * len(tokens) if isinstance(source, str) else source
        return cls(tokens, list(range(-1, len(tokens) - 1)), probs, None if labels is None else list(labels))

    @classmethod
    def merge(cls, *drafts: Draft | None) -> Draft:
        """Trie merge of trees sharing the root: identical token paths become one node.

        The first draft that holds a node gives its ``probs`` row and ``source`` label. If
        only some drafts carry ``probs``, the others' nodes get one-hot rows (deterministic).
        """
        drafts = tuple(d for d in drafts if d is not None and len(d) > 0)
        vocab = next((d.probs.shape[1] for d in drafts if d.probs is not None), None)
        tokens: list[int] = []
        parents: list[int] = []
        rows: list[tuple[Draft, int]] = []  # (draft, node) that each merged node came from
        index: dict[tuple[int, int], int] = {}  # (merged parent, token) -> merged node
        for d in drafts:
            where: list[int] = []  # node of d -> merged node
            for tok, par in zip(d.tokens, d.parents):
                key = (where[par] if par >= 0 else -1, tok)
                if key not in index:
                    index[key] = len(tokens)
                    tokens.append(tok)
                    parents.append(key[0])
                    rows.append((d, len(where)))
                where.append(index[key])
        probs = None
        if vocab is not None:
            ref = next(d.probs for d in drafts if d.probs is not None)
            probs = torch.zeros(len(tokens), vocab, dtype=ref.dtype, device=ref.device)
            for i, (d, j) in enumerate(rows):
                if d.probs is None:
                    probs[i, tokens[i]] = 1.0
                else:
                    probs[i] = d.probs[j]
        source = None
        if any(d.source is not None for d in drafts):
            source = [d.source[j] if d.source is not None else "" for d, j in rows]
        return cls(tokens, parents, probs, source)

    # ------------------------------------------------------------------ structure

    def __len__(self) -> int:
        return len(self.tokens)

    def child_index(self) -> dict[tuple[int, int], int]:
        """``(parent, token) -> node``: the single place a walk looks a child up."""
        return {(p, t): i for i, (t, p) in enumerate(zip(self.tokens, self.parents))}

    def child_lists(self) -> dict[int, list[int]]:
        """``parent -> [children in order]`` (``-1`` = the root); leaves are absent."""
        out: dict[int, list[int]] = {}
        for i, p in enumerate(self.parents):
            out.setdefault(p, []).append(i)
        return out

    def depths(self) -> Tensor:
        """``(n,)`` long: 1 for the root's children."""
        d: list[int] = []
        for p in self.parents:
            d.append(1 if p < 0 else d[p] + 1)
        return torch.tensor(d, dtype=torch.long)

    def tree_mask(self) -> Tensor:
        """``(n, n)`` bool: node i attends to node j iff j is i or an ancestor of i."""
        n = len(self)
        mask = torch.eye(n, dtype=torch.bool)
        for i, p in enumerate(self.parents):
            if p >= 0:
                mask[i] |= mask[p]
        return mask

    def path(self, node: int) -> list[int]:
        """Node indices from the root's child down to ``node`` (inclusive)."""
        out: list[int] = []
        while node >= 0:
            out.append(node)
            node = self.parents[node]
        return out[::-1]

    def paths(self) -> list[list[int]]:
        """Per node, the token ids from the root down to that node (inclusive)."""
        out: list[list[int]] = []
        for t, p in zip(self.tokens, self.parents):
            out.append((out[p] if p >= 0 else []) + [t])
        return out

    # ------------------------------------------------------------------ pruning

    def select(self, keep: Sequence[int]) -> Draft:
        """The sub-draft of the nodes in ``keep`` (sorted, closed under taking parents)."""
        keep = sorted(keep)
        new = {old: i for i, old in enumerate(keep)}
        parents = []
        for old in keep:
            p = self.parents[old]
            assert p < 0 or p in new, f"select: node {old} kept without its parent {p}"
            parents.append(new[p] if p >= 0 else -1)
        return Draft(
            [self.tokens[i] for i in keep],
            parents,
            None if self.probs is None else self.probs[keep],
            None if self.source is None else [self.source[i] for i in keep],
        )

    def truncate_depth(self, max_depth: int) -> Draft:
        """Drop the nodes deeper than ``max_depth`` (depth 1 = the root's children)."""
        return self.select([i for i, d in enumerate(self.depths().tolist()) if d <= max_depth])

    def truncate_nodes(self, max_nodes: int) -> Draft:
        """Keep the first ``max_nodes`` nodes (a valid tree: parents come first)."""
        return self.select(range(min(max(max_nodes, 0), len(self))))
