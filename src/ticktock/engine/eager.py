"""The engine: one forward entry point over mixed inputs (token ids + audio embeddings) on the KV cache.

A forward takes a *linear* part (ids and embeddings, causal, consecutive logical
positions from `cache.next_pos`) optionally followed by a draft *tree* whose nodes
sit at depth-based positions after the linear part and attend to their
ancestors only. It returns logits for the last linear position (the root) and
for every tree node: (1 + n_nodes, V). The fast GPU path sits behind `forward`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..cache.kv import KVCache
from ..model.duplex import DuplexLM
from ..model.gated_lora import has_gated_lora, segment_gate


@dataclass
class Segment:
    """A run of inputs: `ids` (T,) long, or `embeds` (T, D) float; `kinds` (T,) SlotKind values."""

    data: torch.Tensor
    kinds: list[int]

    def __len__(self) -> int:
        return self.data.shape[0]


@dataclass
class ForwardRecord:
    new_tokens: int
    context: int  # resident slots after the forward
    seconds: float


@dataclass
class ForwardRequest:
    """The arguments of one `Engine.forward`: what a session's unit loop asks for (`DuplexSession.unit_steps`)."""

    linear: list[Segment]
    unit: int
    tree_tokens: list[int] | None = None
    tree_parents: list[int] | None = None
    tree_kinds: list[int] | None = None

    @property
    def new_tokens(self) -> int:
        return sum(len(s) for s in self.linear) + len(self.tree_tokens or [])


class Engine:
    def __init__(self, model: DuplexLM, max_slots: int = 8192, clock=None):
        self.model = model
        c = model.cfg.decoder
        self.cache = KVCache(c.num_hidden_layers, c.num_key_value_heads, c.head_dim, max_slots,
                             dtype=model.dtype, device=model.device)
        self.clock = clock
        self.records: list[ForwardRecord] = []
        self.gated = has_gated_lora(model)  # a segment-gated adapter needs each forward's gate (its slot kinds)

    @torch.no_grad()
    def forward(self, linear: list[Segment], unit: int, tree_tokens: list[int] | None = None,
                tree_parents: list[int] | None = None, tree_kinds: list[int] | None = None) -> torch.Tensor:
        """Append `linear` (+ the tree) to the cache and return logits (1 + n_nodes, V) float32.

        tree_parents[i] = index of node i's parent among the nodes, -1 = the root (last linear input).
        """
        run = lambda: self._forward(linear, unit, tree_tokens or [], tree_parents or [], tree_kinds)  # noqa: E731
        if self.clock is None:
            return run()
        n_new = sum(len(s) for s in linear) + len(tree_tokens or [])
        out, seconds = self.clock.time_forward(run, n_new, self.cache.length + n_new)
        self.records.append(ForwardRecord(n_new, self.cache.length, seconds))
        return out

    def _forward(self, linear, unit, tree_tokens, tree_parents, tree_kinds):
        m, cache = self.model, self.cache
        n_lin = sum(len(s) for s in linear)
        segs, kinds, pos, mask = forward_inputs(linear, cache.next_pos, tree_tokens, tree_parents, tree_kinds)
        x = m.embed_segments(segs)
        cache.reserve(pos, unit, kinds)
        h = m.lm(x, pos[None].to(m.device), cache, mask, gate=segment_gate(kinds) if self.gated else None)
        return m.lm.logits(h[0, n_lin - 1:])

    def reset(self) -> None:
        self.cache.reset()
        self.records.clear()


def forward_inputs(linear: list[Segment], base: int, tree_tokens: list[int], tree_parents: list[int],
                   tree_kinds: list[int] | None
                   ) -> tuple[list[torch.Tensor], list[int], torch.Tensor, torch.Tensor | None]:
    """One forward's inputs laid out: (segments, kinds (T,), logical positions (T,) from `base`, new-token mask).

    The mask is (T, T) bool (True = attend): causal over the linear part, each tree node over the linear
    part and its ancestors; None when there is no tree (plain causal).
    """
    n_lin, n_tree = sum(len(s) for s in linear), len(tree_tokens)
    assert n_lin >= 1, "a forward needs at least one linear input (the root)"
    segs = [s.data for s in linear]
    kinds = [k for s in linear for k in s.kinds]
    pos = torch.arange(base, base + n_lin)
    mask = None
    if n_tree:
        segs.append(torch.tensor(tree_tokens, dtype=torch.long))
        kinds += list(tree_kinds) if tree_kinds is not None else [0] * n_tree
        depth, anc = tree_structure(tree_parents)
        pos = torch.cat([pos, base + n_lin - 1 + depth])
        mask = torch.ones(n_lin + n_tree, n_lin + n_tree, dtype=torch.bool).tril()
        mask[n_lin:, n_lin:] = anc
    return segs, kinds, pos, mask


def tree_structure(parents: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """parents (n,) -> depth (n,) (root children = 1) and ancestor-or-self mask (n, n) bool."""
    n = len(parents)
    depth = torch.zeros(n, dtype=torch.long)
    anc = torch.eye(n, dtype=torch.bool)
    for i, p in enumerate(parents):
        assert p < i, "tree nodes must be topologically ordered"
        if p >= 0:
            depth[i] = depth[p] + 1
            anc[i] |= anc[p]
        else:
            depth[i] = 1
    return depth, anc
