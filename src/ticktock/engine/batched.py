"""Batched forwards across sessions: one forward for several sessions, each on its own KV cache.

Every session brings its own `ForwardRequest` (linear segments + an optional `Draft`, what
`Engine.forward` takes) and its own `KVCache`. The new rows of all sessions are concatenated along
the token axis for everything position-wise — embeddings, RMSNorm, the q/k/v and o projections,
the MLP, the final norm, the LM head — so each weight is read once for the whole batch (the point of
many sessions per GPU: a decode step is bound by weight reads). Attention runs on a padded batch: each
session's resident slots side by side (padded to the longest, its new rows written in at their reserved
slots), each under its own mask — causal (or the draft tree's ancestor mask) among its new rows, every
resident slot before them — so a layer is a fixed number of kernels whatever the number of sessions
(the per-session K/V reads cost twice the bytes of reading them in place). Positions come from each
cache's `next_pos` and slots are reserved in each cache exactly as `Engine._forward` does, so a
session's cache after a batched forward holds what its own forward would have written (fp32: equal to
rounding, tests/test_batched.py; a batch of one is `Engine._forward` itself).

    batch = BatchedEngine(model)
    logits = batch.forward([eng_a, eng_b], [ForwardRequest(...), ForwardRequest(...)])  # [(1 + n_a, V), (1 + n_b, V)]

Timing. The batch is timed once, by `clock` (default: the first engine's clock) with the batch's
new tokens and the sum of the sessions' contexts (a cost profile measured on one sequence then
stands for: weights read once for all rows, every session's KV read once — an approximation), and
logged in `records` (`BatchRecord`). Each engine that has a clock also gets its usual
`ForwardRecord`, so the session's own timing code works unchanged; its `seconds` are the session's
share of the device: with a cost clock (one that has `cost(new_tokens, context)`) what the profile
says for the session's own rows — exactly what the forward would cost it alone, so a session's own
numbers do not depend on its batch mates —, with a measuring clock the batch's measured time split in
proportion to the session's new rows (the shares add up to the batch). A session's real latency in
a batch (it waits for the whole batch) comes from the batch records: `bench.device_timeline`.

Not batched here: the fast engine's static shapes and CUDA graphs (a batch runs this eager path on the
engines' caches, whatever engine the sessions hold; `SessionGraphs` is the graph-replayed form for a
fixed set of sessions, which `BatchedEngine(graphs=...)` tries first), and anything a session does
outside its unit's post-audio forwards (idle-window drafting, the side channel's trailing segment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import torch
import torch.nn.functional as F

from ..cache.kv import KVCache
from ..model.transformer import Attention, apply_rope, masked_attention, rope_cos_sin
from ..model.duplex import DuplexLM
from .eager import Engine, ForwardRecord, ForwardRequest, eager_forward, forward_inputs

if TYPE_CHECKING:
    from .session_graphs import SessionGraphs


@dataclass
class BatchRecord:
    """One batched forward: new tokens and context (resident slots after it) per session, and its time."""

    new_tokens: list[int]
    context: list[int]
    seconds: float

    @property
    def sessions(self) -> int:
        return len(self.new_tokens)


@dataclass
class Layout:
    """Where the rows of a batch sit. The position-wise work runs on the asked sessions' new rows concatenated
    (in session order, then zero rows up to T); attention runs on a padded layout, `t` rows for each of the n
    sessions, against each session's keys gathered to `lb` slots: its resident slots, then its row r at slot
    past + r. Rows a session does not use are pads: a pad sees only itself, so its softmax stays finite.

    pad_rows (n * t,): the row of x behind each padded row (a pad: row 0, unused); real (T,): the padded row of
    each row of x (the zero rows: 0, unused); slots (n, t): each padded row's slot in its own cache; dst (n * t,):
    that slot in the gathered keys (n * lb); mask (n, 1, t, lb) bool, True = attend.
    """

    pad_rows: torch.Tensor
    real: torch.Tensor
    slots: torch.Tensor
    dst: torch.Tensor
    mask: torch.Tensor

    @staticmethod
    def build(past: Sequence[int], masks: dict[int, torch.Tensor], t: int, lb: int, total: int | None = None
              ) -> "Layout":
        """past: resident slots of each of the n sessions; masks: per session asked (by index), (k, k) bool among
        its new rows; every past + t ≤ lb. CPU tensors."""
        n = len(past)
        total = sum(m.shape[0] for m in masks.values()) if total is None else total
        slots = torch.stack([torch.arange(p, p + t) for p in past])  # (n, t)
        mask = torch.zeros(n, 1, t, lb, dtype=torch.bool)
        mask[torch.arange(n)[:, None], 0, torch.arange(t), slots] = True  # every row sees itself (a pad: only that)
        pad_rows, real = torch.zeros(n * t, dtype=torch.long), torch.zeros(total, dtype=torch.long)
        off = 0
        for i, m in sorted(masks.items()):
            k, p = m.shape[0], past[i]
            real[off:off + k] = torch.arange(i * t, i * t + k)
            pad_rows[i * t:i * t + k] = torch.arange(off, off + k)
            mask[i, 0, :k, :p] = True
            mask[i, 0, :k, p:p + k] = m
            off += k
        return Layout(pad_rows, real, slots, (slots + torch.arange(n)[:, None] * lb).flatten(), mask)

    def to(self, device: torch.device) -> "Layout":
        return Layout(*(getattr(self, f).to(device) for f in ("pad_rows", "real", "slots", "dst", "mask")))


def run_layers(model: DuplexLM, x: torch.Tensor, pos: torch.Tensor, caches: Sequence[KVCache], lay: Layout
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The decoder over rows x (T, D) at positions pos (T,), each session attending to its keys in `caches`
    (read, not written). -> hidden states after the final norm (T, D), and every padded row's K and V
    (L, Hkv, n * t, d) for the caller to store."""
    lm = model.lm
    lb = lay.mask.shape[-1]
    h = x[None]  # (1, T, D)
    cos, sin = rope_cos_sin(pos[None], lm.cfg.head_dim, lm.cfg.rope_theta, h.dtype)
    new_k, new_v = [], []
    for blk in lm.model.layers:
        attn = blk.self_attn
        q, k, v = project_qkv(attn, blk.input_layernorm(h), cos, sin)  # (H, T, d), (Hkv, T, d) x 2
        q, k, v = (a.index_select(1, lay.pad_rows) for a in (q, k, v))  # the padded layout: (·, n * t, d)
        keys = resident_keys(caches, "k", attn.layer, lb).index_copy_(1, lay.dst, k)  # (Hkv, n * lb, d)
        vals = resident_keys(caches, "v", attn.layer, lb).index_copy_(1, lay.dst, v)
        out = padded_attention(attn, q, keys, vals, lay.mask).index_select(0, lay.real)  # (T, H * d)
        h = h + attn.o_proj(out[None])
        h = h + blk.mlp(blk.post_attention_layernorm(h))
        new_k.append(k)
        new_v.append(v)
    return lm.model.norm(h)[0], torch.stack(new_k), torch.stack(new_v)


@torch.no_grad()
def batched_forward(model: DuplexLM, caches: Sequence[KVCache],
                    requests: Sequence[ForwardRequest]) -> list[torch.Tensor]:
    """Append each request to its cache in one forward; logits per session, (1 + n_nodes, V) float32 each.

    caches: one distinct `KVCache` per request. Every layer runs a fixed number of kernels whatever the number of
    sessions (their keys are gathered into one padded batch), so a batch costs about one forward's launches.
    """
    assert len(caches) == len(requests) >= 1, "one cache per request, at least one"
    assert len({id(c) for c in caches}) == len(caches), "every session of a batch needs its own cache"
    if len(caches) == 1:  # a batch of one is the engine's own forward, bit for bit
        return [eager_forward(model, caches[0], requests[0])]
    dev = model.device
    xs, positions, masks, past, n_lin = [], [], [], [], []
    for cache, req in zip(caches, requests):
        segs, kinds, pos, new_mask = forward_inputs(req, cache.next_pos)
        n = pos.numel()
        xs.append(model.embed_segments(segs)[0])  # (n, D)
        past.append(cache.length)
        cache.reserve(pos, req.unit, kinds)
        masks.append(new_mask if new_mask is not None else torch.ones(n, n, dtype=torch.bool).tril())
        positions.append(pos)
        n_lin.append(sum(len(s) for s in req.linear))
    t = max(m.shape[0] for m in masks)
    lb = -(-(max(past) + t) // 16) * 16  # 16-aligned: the masked kernels want it
    lay = Layout.build(past, dict(enumerate(masks)), t, lb).to(dev)
    h, ks, vs = run_layers(model, torch.cat(xs), torch.cat(positions).to(dev), caches, lay)
    ks, vs = ks.index_select(2, lay.real)[:, None], vs.index_select(2, lay.real)[:, None]  # (L, 1, Hkv, T, d)
    starts = [0]
    for m in masks:
        starts.append(starts[-1] + m.shape[0])
    for cache, s, e in zip(caches, starts, starts[1:]):  # two copies a session, all layers at once
        cache.write_layers(ks[..., s:e, :], vs[..., s:e, :])
    rows = torch.cat([torch.arange(s + nl - 1, e) for s, e, nl in zip(starts, starts[1:], n_lin)])  # root + tree rows
    logits = model.lm.logits(h[rows.to(dev)])  # (sum of 1 + n_nodes, V)
    return list(logits.split([e - s - nl + 1 for s, e, nl in zip(starts, starts[1:], n_lin)]))


def resident_keys(caches: Sequence[KVCache], buf: str, layer: int, lb: int) -> torch.Tensor:
    """Each session's slots [0, lb) of one layer's K or V ("k" / "v"), side by side: (Hkv, B * lb, d). Slots past a
    session's resident ones hold stale values that the mask hides (or its new rows, written in by the caller)."""
    parts = []
    for c in caches:
        t = getattr(c, buf)[layer, 0, :, :lb]  # (Hkv, <= lb, d)
        parts.append(t if t.shape[1] == lb else F.pad(t, (0, 0, 0, lb - t.shape[1])))
    return torch.stack(parts, dim=1).flatten(1, 2)


def project_qkv(attn: Attention, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v of rows x (1, T, D) after QK-norm and RoPE (cos/sin (1, 1, T, d)): (H, T, d), (Hkv, T, d) x 2."""
    _, t, _ = x.shape
    q = attn.q_proj(x).view(1, t, attn.h, attn.d)
    k = attn.k_proj(x).view(1, t, attn.hkv, attn.d)
    if getattr(attn, "q_norm", None) is not None:  # Qwen3's QK-norm, per head, before RoPE
        q, k = attn.q_norm(q), attn.k_norm(k)
    q, k = q.transpose(1, 2), k.transpose(1, 2)  # (1, H, T, d), (1, Hkv, T, d)
    v = attn.v_proj(x).view(1, t, attn.hkv, attn.d).transpose(1, 2)
    return apply_rope(q, cos, sin)[0], apply_rope(k, cos, sin)[0], v[0]


def padded_attention(attn: Attention, q: torch.Tensor, keys: torch.Tensor, vals: torch.Tensor,
                     mask: torch.Tensor) -> torch.Tensor:
    """B sessions' attention, each over its own keys: q (H, B * t, d) in session-major rows, keys/vals
    (Hkv, B * lb, d), mask (B, 1, t, lb) bool -> (B * t, H * d)."""
    h, hkv, d = attn.h, attn.hkv, attn.d
    b, _, tm, lb = mask.shape
    g = h // hkv
    # query head j reads KV head j // g: lay the g heads of a KV head along the rows, so K/V are not repeated
    qp = q.view(hkv, g, b, tm, d).permute(2, 0, 1, 3, 4).reshape(b, hkv, g * tm, d)
    out = masked_attention(qp, keys.view(hkv, b, lb, d).transpose(0, 1), vals.view(hkv, b, lb, d).transpose(0, 1),
                           mask.repeat(1, 1, g, 1) if g > 1 else mask)  # (B, Hkv, g * t, d)
    return out.view(b, hkv, g, tm, d).permute(0, 3, 1, 2, 4).reshape(b * tm, h * d)


class BatchedEngine:
    """Batched forwards over several engines' caches (one session each), timed as a batch.

    clock: times the batch (None: the first engine's clock that is set; none at all: 0 s). `records` logs every
    batch; each engine with a clock also logs its share (see the module's docstring).
    """

    def __init__(self, model: DuplexLM, clock=None, graphs: "SessionGraphs | None" = None):
        self.model = model
        self.clock = clock
        self.graphs = graphs  # forwards over these caches go through their graphs where they fit
        self.records: list[BatchRecord] = []

    @torch.no_grad()
    def forward(self, engines: Sequence[Engine], requests: Sequence[ForwardRequest]) -> list[torch.Tensor]:
        """One forward for `requests[i]` on `engines[i].cache`; logits per session (1 + n_nodes_i, V)."""
        for e in engines:
            if e.model is not self.model:
                raise ValueError("every engine of a batch must run the batch's model")
        n_new = [r.new_tokens for r in requests]
        context = [e.cache.length + n for e, n in zip(engines, n_new)]
        run = lambda: self._forward([e.cache for e in engines], requests)  # noqa: E731
        clock = self.clock or next((e.clock for e in engines if e.clock is not None), None)
        out, seconds = clock.time_forward(run, sum(n_new), sum(context)) if clock is not None else (run(), 0.0)
        self.records.append(BatchRecord(n_new, context, seconds))
        for e, n, c in zip(engines, n_new, context):
            if e.clock is not None:
                share = e.clock.cost(n, c) if hasattr(e.clock, "cost") else seconds * n / sum(n_new)
                e.records.append(ForwardRecord(n, e.cache.length, share))
        return out

    def _forward(self, caches: list[KVCache], requests: Sequence[ForwardRequest]) -> list[torch.Tensor]:
        index = self.graphs.indices(caches) if self.graphs is not None else None
        if index is not None:
            out = self.graphs.forward(dict(zip(index, requests)))
            if out is not None:
                return [out[i] for i in index]
        return batched_forward(self.model, caches, requests)

    def reset(self) -> None:
        self.records.clear()
