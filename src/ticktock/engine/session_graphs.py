"""One forward for every session of a device per round, replayed as a CUDA graph.

`batched_forward` builds its batch anew each time — its shapes follow the sessions in flight, so it runs
eagerly, and an eager forward of an 8B model costs several graph replays. A device's live sessions are a
fixed set, though, so `SessionGraphs` takes every one of them in each forward and fixes the shapes by buckets:

- the new rows of the sessions asked, concatenated, padded to `T` rows (a power of two up to `MAX_ROWS`), for
  everything position-wise — weights are read once for all, and up to a few hundred rows a GEMM stays bound
  by that read;
- attention on a padded layout, `t` rows a session (a power of two up to `ROWS[-1]`) against its keys
  gathered up to a length bucket `lb`. Rows a session does not use are pads: each attends only to itself and
  is written to a free slot past the session's resident ones, so sessions not asked keep their ledger and
  their resident slots.

A forward's shapes then depend on (T, t, lb) only, and each is a CUDA graph captured once for the whole set
(`warm`, before a run), not once per engine. A round costs about one forward however many units are in flight.

    graphs = SessionGraphs(model, [e.cache for e in engines])        # the device's sessions, fixed
    out = graphs.forward({0: ForwardRequest(...), 3: ForwardRequest(...)})   # {0: (1 + n_0, V), 3: ...} or None

`forward` returns None (nothing done) when the requests need more rows than the buckets hold or a cache has no
room for its pads; `take` picks the requests that fit together. Without CUDA (tests) the same code runs eagerly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from ..cache.kv import KVCache
from ..model.duplex import DuplexLM
from .batched import Layout, run_layers
from .eager import ForwardRequest, forward_inputs
from .fast import capture_graph, length_bucket

ROWS = (1, 2, 4, 8, 16, 32)  # rows a session in the attention layout: a unit's first forward (its audio) fits
MAX_ROWS = 128  # rows of all sessions together


def _bucket(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


@dataclass
class _Inputs:
    """A shape's static inputs, filled before each replay: n sessions, T rows, t rows a session, lb key slots."""

    x: torch.Tensor  # (T, D) the asked sessions' new rows, concatenated in session order, then zeros
    pos: torch.Tensor  # (T,) logical positions
    lay: Layout  # where the rows sit (`batched.Layout`), on the device


class SessionGraphs:
    """Forwards over a fixed list of caches (one per session), a CUDA graph per (T, t, lb) shape.

    capture: None = graphs when the model is on CUDA; False = the same forward, eagerly (any device).
    """

    def __init__(self, model: DuplexLM, caches: Sequence[KVCache], capture: bool | None = None):
        if len({id(c) for c in caches}) != len(caches) or not caches:
            raise ValueError("one distinct cache per session, at least one")
        self.model, self.caches = model, list(caches)
        self.capture = model.device.type == "cuda" if capture is None else capture
        self.max_slots = min(c.max_slots for c in self.caches)
        self.inputs: dict[tuple[int, int, int], _Inputs] = {}
        self.graphs: dict[tuple[int, int, int], tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}
        self._pool = torch.cuda.graph_pool_handle() if self.capture else None
        self._index = {id(c): i for i, c in enumerate(self.caches)}
        self.forwards = 0  # forwards run here (for tests and reports)

    def indices(self, caches: Sequence[KVCache]) -> list[int] | None:
        """The session index of each cache here; None when one is not among them."""
        out = [self._index.get(id(c)) for c in caches]
        return None if None in out else out

    def shape(self, caches: Sequence[KVCache], requests: Sequence[ForwardRequest]) -> tuple[int, int] | None:
        """(T, t) these requests (on these caches, one each) would take here; None when they cannot run here."""
        if self.indices(caches) is None:
            return None
        sizes = [r.new_tokens for r in requests]
        t, total = _bucket(max(sizes)), _bucket(sum(sizes))
        return (total, t) if t <= self._largest_t() and total <= MAX_ROWS else None

    def take(self, caches: Sequence[KVCache], requests: Sequence[ForwardRequest], first: int | None = None
             ) -> list[int]:
        """The indices of requests that fit one forward here together, smallest first (so the most do); the
        first `first` requests (default: all) before any of the others."""
        if self.indices(caches) is None:
            return []
        first = len(requests) if first is None else first
        cap, chosen, total = self._largest_t(), [], 0
        for group in (range(first), range(first, len(requests))):
            for k in sorted(group, key=lambda k: requests[k].new_tokens):
                n = requests[k].new_tokens
                if _bucket(n) > cap or _bucket(total + n) > MAX_ROWS:
                    break  # sorted: nothing after fits either
                chosen.append(k)
                total += n
        return sorted(chosen)

    def _largest_t(self) -> int:
        """The most rows a session can take now: every session's pads need room past its resident slots."""
        room = self.max_slots - max(c.length for c in self.caches)
        return max((b for b in ROWS if b <= room), default=0)

    @torch.no_grad()
    def forward(self, requests: dict[int, ForwardRequest]) -> dict[int, torch.Tensor] | None:
        """Append `requests[i]` to session i's cache, every session in one forward: logits (1 + n_nodes, V) per
        session asked; None (nothing done) when they do not fit."""
        requests = dict(sorted(requests.items()))
        fits = self.shape([self.caches[i] for i in requests], list(requests.values()))
        if fits is None:
            return None
        total, t = fits
        laid = {i: forward_inputs(r, self.caches[i].next_pos) for i, r in requests.items()}
        lb = length_bucket(max(c.length for c in self.caches) + t, self.max_slots)
        inp, spans = self._stage(total, t, lb, requests, laid)
        hidden = self._run((total, t, lb), inp)  # (T, D)
        self.forwards += 1
        rows = torch.cat([torch.arange(a, b) for a, b in spans.values()]).to(hidden.device)  # roots and tree rows
        logits = self.model.lm.logits(hidden[rows])  # one pass over the LM head for every session
        return dict(zip(spans, logits.split([b - a for a, b in spans.values()])))

    @torch.no_grad()
    def warm(self, slots: int) -> int:
        """Capture now the graphs of forwards on caches up to `slots` long, so none is captured mid-session; call
        it on fresh caches (its forwards are all pads, written past the resident slots). Returns how many."""
        if not self.capture:
            return 0
        n, sessions = 0, len(self.caches)
        for t in ROWS:
            top = max(c.length for c in self.caches) + t
            if top > self.max_slots:
                continue
            lbs = sorted({length_bucket(c, self.max_slots) for c in range(top, min(slots + t, self.max_slots) + 1, 128)}
                         | {length_bucket(top, self.max_slots)})
            total = t
            while total <= min(MAX_ROWS, _bucket(sessions * t)):
                for lb in lbs:
                    if (total, t, lb) not in self.graphs:
                        self._run((total, t, lb), self._stage(total, t, lb, {}, {})[0])
                        n += 1
                total *= 2
        return n

    # ------------------------------------------------------------ inputs
    def _stage(self, total: int, t: int, lb: int, requests: dict[int, ForwardRequest], laid: dict
               ) -> tuple[_Inputs, dict[int, tuple[int, int]]]:
        """Fill the shape's static inputs; reserve each asked session's slots. Returns them and, per session asked,
        its rows of x that take logits (root to last tree node)."""
        m = self.model
        x = torch.zeros(total, m.cfg.decoder.hidden_size, dtype=m.dtype, device=m.device)
        pos = torch.zeros(total, dtype=torch.long)
        masks, spans, off = {}, {}, 0
        past = [c.length for c in self.caches]
        for i, req in requests.items():
            segs, kinds, p, new_mask = laid[i]
            k = p.numel()
            x[off:off + k] = m.embed_segments(segs)[0]
            pos[off:off + k] = p
            masks[i] = new_mask if new_mask is not None else torch.ones(k, k, dtype=torch.bool).tril()
            self.caches[i].reserve(p, req.unit, kinds)
            spans[i] = (off + sum(len(s) for s in req.linear) - 1, off + k)
            off += k
        lay = Layout.build(past, masks, t, lb, total)
        key = (total, t, lb)
        if key not in self.inputs:
            self.inputs[key] = _Inputs(torch.empty_like(x), torch.empty_like(pos, device=m.device), lay.to(m.device))
        inp = self.inputs[key]
        inp.x.copy_(x)
        inp.pos.copy_(pos)
        for f in ("pad_rows", "real", "slots", "dst", "mask"):
            getattr(inp.lay, f).copy_(getattr(lay, f))
        return inp, spans

    # ------------------------------------------------------------ the forward
    def _run(self, key: tuple[int, int, int], inp: _Inputs) -> torch.Tensor:
        if not self.capture:
            return self._body(inp)
        if key not in self.graphs:
            self.graphs[key] = capture_graph(lambda: self._body(inp), self._pool, self.model.device)
        graph, out = self.graphs[key]
        graph.replay()
        return out

    def _body(self, inp: _Inputs) -> torch.Tensor:
        """The rows of x through the decoder; every padded row's K/V into its cache at its slot. -> (T, D)."""
        hidden, ks, vs = run_layers(self.model, inp.x, inp.pos, self.caches, inp.lay)  # ks/vs (L, Hkv, n * t, d)
        t = inp.lay.slots.shape[1]
        for i, c in enumerate(self.caches):  # two copies a session, every layer at once
            c.k[:, 0].index_copy_(2, inp.lay.slots[i], ks[:, :, i * t:(i + 1) * t])
            c.v[:, 0].index_copy_(2, inp.lay.slots[i], vs[:, :, i * t:(i + 1) * t])
        return hidden


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
