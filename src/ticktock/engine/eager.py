"""The engine: one forward entry point over mixed inputs (token ids + audio embeddings) on the KV cache.

A forward takes a *linear* part (ids and embeddings, causal, consecutive logical
positions from `cache.next_pos`) optionally followed by a `Draft` (a chain or a tree)
whose nodes sit at depth-based positions after the linear part and attend to their
ancestors only. It returns logits for the last linear position (the root) and
for every tree node: (1 + n_nodes, V). The fast GPU path sits behind `forward`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..cache.kv import KVCache
from ..decoding.draft import Draft
from ..model.duplex import DuplexLM


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
    draft: Draft | None = None
    draft_kinds: list[int] | None = None

    @property
    def new_tokens(self) -> int:
        return sum(len(s) for s in self.linear) + (len(self.draft) if self.draft is not None else 0)


class Engine:
    def __init__(self, model: DuplexLM, max_slots: int = 8192, clock=None):
        self.model = model
        c = model.cfg.decoder
        self.cache = KVCache(c.num_hidden_layers, c.num_key_value_heads, c.head_dim, max_slots,
                             dtype=model.dtype, device=model.device)
        self.clock = clock
        self.records: list[ForwardRecord] = []

    @torch.no_grad()
    def forward(self, linear: list[Segment], unit: int, draft: Draft | None = None,
                draft_kinds: list[int] | None = None) -> torch.Tensor:
        """Append `linear` (+ the draft's nodes) to the cache and return logits (1 + n_nodes, V) float32.

        draft: hangs off the last linear input (the root); draft_kinds: its nodes' ledger kinds (default 0).
        """
        req = ForwardRequest(linear, unit, draft, draft_kinds)
        run = lambda: self._forward(req)  # noqa: E731
        if self.clock is None:
            return run()
        n_new = req.new_tokens
        out, seconds = self.clock.time_forward(run, n_new, self.cache.length + n_new)
        self.records.append(ForwardRecord(n_new, self.cache.length, seconds))
        return out

    def _forward(self, req: ForwardRequest) -> torch.Tensor:
        return eager_forward(self.model, self.cache, req)

    def upkeep(self, budget: float) -> float:
        """Idle-time work of the engine itself, within `budget` seconds (a session's listening slack, before its
        decoder's). Returns the seconds it took. The eager engine has none."""
        return 0.0

    def reset(self) -> None:
        self.cache.reset()
        self.records.clear()


def eager_forward(model: DuplexLM, cache: KVCache, req: ForwardRequest) -> torch.Tensor:
    """The model's own forward of `req` on `cache`: logits (1 + n_nodes, V) of the root and the draft nodes."""
    n_lin = sum(len(s) for s in req.linear)
    segs, kinds, pos, mask = forward_inputs(req, cache.next_pos)
    x = model.embed_segments(segs)
    cache.reserve(pos, req.unit, kinds)
    h = model.lm(x, pos[None].to(model.device), cache, mask)
    return model.lm.logits(h[0, n_lin - 1:])


def forward_inputs(req: ForwardRequest, base: int
                   ) -> tuple[list[torch.Tensor], list[int], torch.Tensor, torch.Tensor | None]:
    """One forward's inputs laid out: (segments, kinds (T,), logical positions (T,) from `base`, new-token mask).

    The mask is (T, T) bool (True = attend): causal over the linear part, each draft node over the linear
    part and its ancestors; None when there is no draft (plain causal).
    """
    draft = req.draft
    n_lin, n_tree = sum(len(s) for s in req.linear), len(draft) if draft is not None else 0
    assert n_lin >= 1, "a forward needs at least one linear input (the root)"
    segs = [s.data for s in req.linear]
    kinds = [k for s in req.linear for k in s.kinds]
    pos = torch.arange(base, base + n_lin)
    mask = None
    if n_tree:
        segs.append(torch.tensor(draft.tokens, dtype=torch.long))
        kinds += list(req.draft_kinds) if req.draft_kinds is not None else [0] * n_tree
        pos = torch.cat([pos, base + n_lin - 1 + draft.depths()])
        mask = torch.ones(n_lin + n_tree, n_lin + n_tree, dtype=torch.bool).tril()
        mask[n_lin:, n_lin:] = draft.tree_mask()
    return segs, kinds, pos, mask
