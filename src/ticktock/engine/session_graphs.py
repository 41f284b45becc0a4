"""One forward for every session of a device per round, replayed as a CUDA graph.

`batched_forward` builds its batch anew each time — its shapes follow the sessions in flight, so it runs
eagerly, and an eager forward of an 8B model costs several graph replays. A device's live sessions are a
fixed set, though: `SessionGraphs` runs every one of them in each forward, `t` rows a session (a power of
two up to `ROWS`; a session with less to do, or nothing, pads), against its keys gathered up to a length
bucket, so a forward's shapes depend on (t, length bucket) only and each is captured once. The rows of
sessions without a request are pads: each attends only to itself and is written to a free slot past its
session's resident ones, so no session's ledger or resident slots change but those of the sessions asked.

A round then costs about one forward however many units are in flight: reading the weights once (up to
a few hundred rows a GEMM stays bound by them), plus reading every session's keys.

    graphs = SessionGraphs(model, [e.cache for e in engines])        # the device's sessions, fixed
    out = graphs.forward({0: ForwardRequest(...), 3: ForwardRequest(...)})   # {0: (1 + n_0, V), 3: ...} or None

`forward` returns None when a request needs more than `ROWS` rows or a cache has no room for the pads;
the caller then runs those forwards another way. On a device without CUDA (tests) the same code runs eagerly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from ..cache.kv import KVCache
from ..model.duplex import DuplexLM
from ..model.transformer import rope_cos_sin
from .batched import _resident, padded_attention, project_qkv
from .eager import ForwardRequest, forward_inputs
from .fast import capture_graph, length_bucket

ROWS = (1, 2, 4, 8)


@dataclass
class _Inputs:
    """A shape's static inputs, filled before each replay. n sessions, t rows each, lb key slots."""

    x: torch.Tensor  # (n * t, D) embedded rows, session-major
    pos: torch.Tensor  # (n * t,) logical positions
    dst: torch.Tensor  # (n * t,) each row's slot in the gathered keys (n * lb)
    slots: torch.Tensor  # (n, t) each row's slot in its own cache
    mask: torch.Tensor  # (n, 1, t, lb) bool, True = attend


class SessionGraphs:
    """Forwards over a fixed list of caches (one per session), a CUDA graph per (rows a session, length bucket).

    capture: None = graphs when the model is on CUDA; False = the same forward, eagerly (any device).
    """

    def __init__(self, model: DuplexLM, caches: Sequence[KVCache], capture: bool | None = None):
        if len({id(c) for c in caches}) != len(caches) or not caches:
            raise ValueError("one distinct cache per session, at least one")
        self.model, self.caches = model, list(caches)
        self.capture = model.device.type == "cuda" if capture is None else capture
        self.max_slots = min(c.max_slots for c in self.caches)
        self.inputs: dict[tuple[int, int], _Inputs] = {}
        self.graphs: dict[tuple[int, int], tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}
        self._pool = torch.cuda.graph_pool_handle() if self.capture else None
        self.forwards = 0  # forwards run here (for tests and reports)

    def rows(self, caches: Sequence[KVCache], requests: Sequence[ForwardRequest]) -> int | None:
        """The rows a session these requests (on these caches) would take here; None when they cannot run here."""
        t = next((b for b in ROWS if b >= max(r.new_tokens for r in requests)), None)
        mine = {id(c) for c in self.caches}
        if t is None or any(id(c) not in mine for c in caches) or any(c.length + t > self.max_slots
                                                                       for c in self.caches):
            return None
        return t

    @torch.no_grad()
    def forward(self, requests: dict[int, ForwardRequest]) -> dict[int, torch.Tensor] | None:
        """Append `requests[i]` to session i's cache, every session in one forward: logits (1 + n_nodes, V) per
        session asked; None (nothing done) when a request or a pad does not fit."""
        t = self.rows([self.caches[i] for i in requests], list(requests.values()))
        if t is None:
            return None
        laid = {i: forward_inputs(r, self.caches[i].next_pos) for i, r in requests.items()}
        lb = length_bucket(max(c.length for c in self.caches) + t, self.max_slots)
        inp = self._stage(t, lb, requests, laid)
        hidden = self._run(t, lb, inp)  # (n * t, D)
        self.forwards += 1
        spans = {i: (i * t + sum(len(s) for s in r.linear) - 1, i * t + laid[i][2].numel())
                 for i, r in requests.items()}  # each session's root and tree rows
        rows = torch.cat([torch.arange(a, b) for a, b in spans.values()]).to(hidden.device)
        logits = self.model.lm.logits(hidden[rows])  # one pass over the LM head for every session
        return dict(zip(spans, logits.split([b - a for a, b in spans.values()])))

    @torch.no_grad()
    def warm(self, slots: int) -> int:
        """Capture now the graphs of forwards on caches up to `slots` long (every session padding), so none is
        captured mid-session; call it on fresh caches. Writes only past the resident slots. Returns how many."""
        if not self.capture:
            return 0
        n = 0
        for t in ROWS:
            top = max(c.length for c in self.caches) + t
            lb = length_bucket(top, self.max_slots)
            while top <= self.max_slots and lb <= length_bucket(min(slots + t, self.max_slots), self.max_slots):
                if (t, lb) not in self.graphs:
                    self._run(t, lb, self._stage(t, lb, {}, {}))
                    n += 1
                if lb == self.max_slots:
                    break
                lb = length_bucket(lb + 1, self.max_slots)
        return n

    # ------------------------------------------------------------ inputs
    def _stage(self, t: int, lb: int, requests: dict[int, ForwardRequest], laid: dict) -> _Inputs:
        m, n = self.model, len(self.caches)
        if (t, lb) not in self.inputs:
            dev, d = m.device, m.cfg.decoder.hidden_size
            self.inputs[(t, lb)] = _Inputs(torch.zeros(n * t, d, dtype=m.dtype, device=dev),
                                           torch.zeros(n * t, dtype=torch.long, device=dev),
                                           torch.zeros(n * t, dtype=torch.long, device=dev),
                                           torch.zeros(n, t, dtype=torch.long, device=dev),
                                           torch.zeros(n, 1, t, lb, dtype=torch.bool, device=dev))
        inp = self.inputs[(t, lb)]
        x = torch.zeros(n * t, inp.x.shape[1], dtype=m.dtype, device=m.device)
        pos = torch.zeros(n * t, dtype=torch.long)
        mask = torch.zeros(n, 1, t, lb, dtype=torch.bool)
        slots = torch.zeros(n, t, dtype=torch.long)
        for i, c in enumerate(self.caches):
            past = c.length
            slots[i] = torch.arange(past, past + t)
            pos[i * t:(i + 1) * t] = c.next_pos  # pads: any position (they attend only to themselves)
            mask[i, 0, torch.arange(t), slots[i]] = True
            if i in requests:
                segs, kinds, p, new_mask = laid[i]
                k = p.numel()
                x[i * t:i * t + k] = m.embed_segments(segs)[0]
                pos[i * t:i * t + k] = p
                mask[i, 0, :k, :past] = True
                mask[i, 0, :k, past:past + k] = (new_mask if new_mask is not None
                                                 else torch.ones(k, k, dtype=torch.bool).tril())
                c.reserve(p, requests[i].unit, kinds)
        inp.x.copy_(x)
        inp.pos.copy_(pos)
        inp.slots.copy_(slots)
        inp.dst.copy_((slots + torch.arange(n)[:, None] * lb).flatten())
        inp.mask.copy_(mask)
        return inp

    # ------------------------------------------------------------ the forward
    def _run(self, t: int, lb: int, inp: _Inputs) -> torch.Tensor:
        if not self.capture:
            return self._body(t, lb, inp)
        if (t, lb) not in self.graphs:
            self.graphs[(t, lb)] = capture_graph(lambda: self._body(t, lb, inp), self._pool, self.model.device)
        graph, out = self.graphs[(t, lb)]
        graph.replay()
        return out

    def _body(self, t: int, lb: int, inp: _Inputs) -> torch.Tensor:
        """Every session's t rows through the decoder; their K/V into each cache at `inp.slots`. -> (n * t, D)."""
        lm = self.model.lm
        cfg = lm.cfg
        x = inp.x[None]  # (1, n * t, D)
        cos, sin = rope_cos_sin(inp.pos[None], cfg.head_dim, cfg.rope_theta, x.dtype)
        new_k, new_v = [], []
        for blk in lm.model.layers:
            attn = blk.self_attn
            q, k, v = project_qkv(attn, blk.input_layernorm(x), cos, sin)
            keys = _resident(self.caches, "k", attn.layer, lb).index_copy_(1, inp.dst, k)  # (Hkv, n * lb, d)
            vals = _resident(self.caches, "v", attn.layer, lb).index_copy_(1, inp.dst, v)
            x = x + attn.o_proj(padded_attention(attn, q, keys, vals, inp.mask)[None])
            x = x + blk.mlp(blk.post_attention_layernorm(x))
            new_k.append(k)
            new_v.append(v)
        ks, vs = torch.stack(new_k), torch.stack(new_v)  # (L, Hkv, n * t, d)
        for i, c in enumerate(self.caches):  # two copies a session, every layer at once
            c.k[:, 0].index_copy_(2, inp.slots[i], ks[:, :, i * t:(i + 1) * t])
            c.v[:, 0].index_copy_(2, inp.slots[i], vs[:, :, i * t:(i + 1) * t])
        return lm.model.norm(x)[0]


_LAST: list[SessionGraphs] = []  # a device runs one set of live sessions at a time


def shared_session_graphs(model: DuplexLM, caches: Sequence[KVCache], capture: bool | None = None) -> SessionGraphs:
    """The `SessionGraphs` of these caches, reused while they are the same (their graphs are captured once:
    warmed up before a run, kept from one decoder's run to the next on the same engines)."""
    caches = list(caches)
    last = _LAST[0] if _LAST else None
    want = model.device.type == "cuda" if capture is None else capture
    if (last is None or last.model is not model or last.capture != want or len(last.caches) != len(caches)
            or any(a is not b for a, b in zip(last.caches, caches))):
        _LAST[:] = [SessionGraphs(model, caches, capture)]
    return _LAST[0]
