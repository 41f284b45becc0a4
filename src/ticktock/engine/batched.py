"""Batched forwards across sessions: one forward for several sessions, each on its own KV cache.

Every session brings its own `ForwardRequest` (linear segments + an optional `Draft`, what
`Engine.forward` takes) and its own `KVCache`. The new rows of all sessions are concatenated along
the token axis for everything position-wise — embeddings, RMSNorm, the q/k/v and o projections,
the MLP, the final norm, the LM head — so each weight is read once for the whole batch (the point of
many sessions per GPU: a decode step is bound by weight reads). Attention runs per session against
its own cache under its own mask: causal (or the draft tree's ancestor mask) among its new rows,
every resident slot before them. Positions come from each cache's `next_pos` and slots are reserved
in each cache exactly as `Engine._forward` does, so a session's cache after a batched forward holds
what its own forward would have written (fp32: equal to rounding, tests/test_batched.py).

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

Not batched: the fast engine's static shapes and CUDA graphs (a batch runs this eager path on the
engines' caches, whatever engine the sessions hold), and anything a session does outside its
unit's post-audio forwards (idle-window drafting, the side channel's trailing segment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from ..cache.kv import KVCache
from ..model.transformer import Attention, apply_rope, masked_attention, rope_cos_sin
from ..model.duplex import DuplexLM
from .eager import Engine, ForwardRecord, ForwardRequest, forward_inputs


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
class _Rows:
    """One session's part of a batch: its cache, its rows [start, start + n) and its attention mask (n, S)."""

    cache: KVCache
    start: int
    n: int
    n_lin: int
    mask: torch.Tensor


@torch.no_grad()
def batched_forward(model: DuplexLM, caches: Sequence[KVCache],
                    requests: Sequence[ForwardRequest]) -> list[torch.Tensor]:
    """Append each request to its cache in one forward; logits per session, (1 + n_nodes, V) float32 each.

    caches: one distinct `KVCache` per request.
    """
    assert len(caches) == len(requests) >= 1, "one cache per request, at least one"
    assert len({id(c) for c in caches}) == len(caches), "every session of a batch needs its own cache"
    lm, dev = model.lm, model.device
    parts: list[_Rows] = []
    xs, positions = [], []
    start = 0
    for cache, req in zip(caches, requests):
        segs, kinds, pos, new_mask = forward_inputs(req, cache.next_pos)
        n, n_lin = pos.numel(), sum(len(s) for s in req.linear)
        if new_mask is None:
            new_mask = torch.ones(n, n, dtype=torch.bool).tril()
        xs.append(model.embed_segments(segs)[0])  # (n, D)
        cache.reserve(pos, req.unit, kinds)
        past = torch.ones(n, cache.length - n, dtype=torch.bool)
        parts.append(_Rows(cache, start, n, n_lin, torch.cat([past, new_mask], dim=-1).to(dev)))  # (n, S)
        positions.append(pos)
        start += n
    x = torch.cat(xs)[None]  # (1, T, D), T = all sessions' new rows
    cos, sin = rope_cos_sin(torch.cat(positions)[None].to(dev), lm.cfg.head_dim, lm.cfg.rope_theta, x.dtype)
    for blk in lm.model.layers:
        x = x + _attention(blk.self_attn, blk.input_layernorm(x), cos, sin, parts)
        x = x + blk.mlp(blk.post_attention_layernorm(x))
    h = lm.model.norm(x)[0]  # (T, D)
    rows = torch.cat([torch.arange(p.start + p.n_lin - 1, p.start + p.n) for p in parts])  # root + tree rows
    logits = lm.logits(h[rows.to(dev)])  # (sum of 1 + n_nodes, V)
    return list(logits.split([p.n - p.n_lin + 1 for p in parts]))


def _attention(attn: Attention, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
               parts: list[_Rows]) -> torch.Tensor:
    """`Attention.forward` over concatenated sessions: shared projections, attention per session's cache.

    x (1, T, D), cos/sin (1, 1, T, d) -> (1, T, D)."""
    _, t, _ = x.shape
    q = attn.q_proj(x).view(1, t, attn.h, attn.d)
    k = attn.k_proj(x).view(1, t, attn.hkv, attn.d)
    if getattr(attn, "q_norm", None) is not None:  # Qwen3's QK-norm, per head, before RoPE
        q, k = attn.q_norm(q), attn.k_norm(k)
    q, k = q.transpose(1, 2), k.transpose(1, 2)  # (1, H, T, d), (1, Hkv, T, d)
    v = attn.v_proj(x).view(1, t, attn.hkv, attn.d).transpose(1, 2)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    outs = []
    for p in parts:
        rows = slice(p.start, p.start + p.n)
        ks, vs = p.cache.write(attn.layer, k[:, :, rows], v[:, :, rows])  # its resident slots (1, Hkv, S, d)
        if attn.hkv != attn.h:
            ks = ks.repeat_interleave(attn.h // attn.hkv, dim=1)
            vs = vs.repeat_interleave(attn.h // attn.hkv, dim=1)
        outs.append(masked_attention(q[:, :, rows], ks, vs, p.mask))  # (1, H, n, d)
    out = torch.cat(outs, dim=2)  # (1, H, T, d)
    return attn.o_proj(out.transpose(1, 2).reshape(1, t, attn.h * attn.d))


class BatchedEngine:
    """Batched forwards over several engines' caches (one session each), timed as a batch.

    clock: times the batch (None: the first engine's clock that is set; none at all: 0 s). `records` logs every
    batch; each engine with a clock also logs its share (see the module's docstring).
    """

    def __init__(self, model: DuplexLM, clock=None):
        self.model = model
        self.clock = clock
        self.records: list[BatchRecord] = []

    @torch.no_grad()
    def forward(self, engines: Sequence[Engine], requests: Sequence[ForwardRequest]) -> list[torch.Tensor]:
        """One forward for `requests[i]` on `engines[i].cache`; logits per session (1 + n_nodes_i, V)."""
        for e in engines:
            if e.model is not self.model:
                raise ValueError("every engine of a batch must run the batch's model")
        n_new = [r.new_tokens for r in requests]
        context = [e.cache.length + n for e, n in zip(engines, n_new)]
        run = lambda: batched_forward(self.model, [e.cache for e in engines], requests)  # noqa: E731
        clock = self.clock or next((e.clock for e in engines if e.clock is not None), None)
        out, seconds = clock.time_forward(run, sum(n_new), sum(context)) if clock is not None else (run(), 0.0)
        self.records.append(BatchRecord(n_new, context, seconds))
        for e, n, c in zip(engines, n_new, context):
            if e.clock is not None:
                share = e.clock.cost(n, c) if hasattr(e.clock, "cost") else seconds * n / sum(n_new)
                e.records.append(ForwardRecord(n, e.cache.length, share))
        return out

    def reset(self) -> None:
        self.records.clear()
