"""The engine's fast GPU path: static shapes and one CUDA graph per (query bucket, cache-length bucket).

`FastEngine` is an `Engine` with the same `forward` (linear segments + an optional `Draft`
-> logits (1 + n_nodes, V)) and the same `KVCache`; only how a forward runs differs.

    eng = FastEngine(model, max_slots=8192)        # graphs when the model is on CUDA, eager otherwise
    logits = eng.forward([Segment(ids, kinds)], unit=0)

A forward of T new inputs on the fast path:

1. T is padded to a bucket Tb in `BUCKETS` (1, 2, 4, ..., 128). Pad rows write their
   K/V to scratch slots [start + T, start + Tb) past the cache's `length`, which no
   later forward reads; a pad row attends to the past and to itself only, so what it
   leaves there is finite (a masked slot holding NaN would still poison `P @ V`).
2. Attention covers the cache slots [0, Lb), Lb = `length_bucket(start + Tb)` (steps of
   1/8 octave, at least 128), under an additive mask built on the device: slots before
   `start` are attended, the new slots follow the causal / tree mask, the rest are masked.
   GQA folds the query heads of a KV head into the query length, q (1, H_kv, G*Tb, D),
   so the cache is never repeated per head. Attention kernels: "sdpa" (PyTorch's fused
   attention; with a mask, the memory-efficient kernel, which runs one block per KV head and
   query tile — few blocks for a 1-token forward), "matmul" (HF-eager style: bf16 scores
   by batched GEMM over many blocks, softmax in fp32 accumulation, GEMM with V) and, for
   1-token forwards where Triton runs, "fused" (`decode_attention`: QK-norm, RoPE, the K/V
   writes and split-KV attention in two kernels per layer, no mask). "auto" captures each
   kernel's graph for a bucket, times their replays and keeps the fastest (a fused graph only
   if its output agrees with the others').
3. Everything that varies goes into static tensors before replay: token ids, the
   "row is an embedding" flags, positions, `start` and the (Tb, Tb) new-token mask in
   one int32 buffer (one non-blocking copy from pinned memory); audio embeddings into a
   static (Tmax, D) buffer.
4. One CUDA graph per (Tb, Lb) is captured on first use (all graphs share one memory
   pool) and replayed; logits of the root and tree rows are computed after the graph,
   exactly as in `Engine`.

No host synchronisation happens inside a forward. Inputs the path does not cover — more
than `max(BUCKETS)` new tokens, a cache too full for the padding, a model not on CUDA
(mode "auto") — take `Engine`'s eager path.

Weights: q/k/v (and gate/up, when memory allows) are packed into one matrix each at the
first fast forward; call `refresh()` after changing the model's weights. A decoder with QK-norm
(Qwen3) has its q_norm/k_norm gains packed per head, applied before RoPE in `rope_split`.
"""

from __future__ import annotations

import functools
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import Callable, Iterable

import torch
import torch.nn.functional as F

from .decode_attention import available as fused_available, decode_attention, scratch as fused_scratch
from .decode_attention import splits as fused_splits
from .eager import Engine, ForwardRequest, Segment, forward_inputs
from ..model.transformer import masked_attention, rope_cos_sin
from ..model.duplex import DuplexLM

BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)
AHEAD_SLOTS = 256  # `upkeep` captures the graphs of forwards starting up to this far past the resident length
MODES = ("auto", "eager", "static", "graph")
ATTENTION = ("auto", "sdpa", "matmul", "fused")
FUSED_AGREEMENT = 0.1  # a fused graph's hidden states within this relative distance of the others', or it is unused


def query_bucket(n: int, buckets: tuple[int, ...] = BUCKETS) -> int | None:
    """The smallest bucket holding n new tokens, or None when n exceeds the largest."""
    for b in buckets:
        if n <= b:
            return b
    return None


def length_bucket(n: int, max_slots: int) -> int:
    """Cache slots attention covers when the forward's last slot is n - 1: n rounded up to 1/8 octave (≥ 128)."""
    step = max(128, 1 << max(0, n.bit_length() - 4))
    return min(max_slots, -(-n // step) * step)


@dataclass
class Kernels:
    """The elementwise stages of a block; compiled (one fused kernel each) or eager."""

    rms: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (…, dim), (dim,) -> (…, dim)
    rope_split: Callable[..., tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    silu_mul: Callable[[torch.Tensor], torch.Tensor]  # (T, 2I) -> (T, I)


@functools.lru_cache(maxsize=None)  # shared by every engine of a shape: compiled once per process
def make_kernels(h: int, hkv: int, d: int, eps: float, compiled: bool) -> Kernels:
    """Block stages for h query heads, hkv KV heads of size d. compiled: fuse each with `torch.compile`.

    Eagerly RMSNorm, RoPE + the q/k/v split and SiLU·up are ~15 small kernels per block; in a
    1-token forward of a 7B model their launches cost about as much as a fifth of the weight reads.
    """
    g, half = h // hkv, d // 2

    def rms(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), w, eps)

    def rope_split(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, qkn: torch.Tensor | None = None):
        """qkv (1, T, (h + 2 hkv) d), cos/sin (1, T, 1, d) -> q (1, hkv, g T, d), k and v (1, hkv, T, d).

        qkn (h + hkv, d): QK-norm weights (Qwen3), each head's q or k RMS-normalised before RoPE; None: none."""
        tb = qkv.shape[1]
        qk = qkv[..., :(h + hkv) * d].view(1, tb, h + hkv, d)
        if qkn is not None:  # as `RMSNorm`: normalise in fp32, back to the model dtype, then the gain
            qk = qkn * F.rms_norm(qk.float(), (d,), None, eps).to(qk.dtype)
        qk = torch.addcmul(qk * cos, torch.cat([qk[..., half:], qk[..., :half]], dim=-1), sin)  # RoPE
        q = qk[:, :, :h].unflatten(2, (hkv, g)).permute(0, 2, 3, 1, 4).reshape(1, hkv, g * tb, d)
        return q, qk[:, :, h:].transpose(1, 2), qkv[..., (h + hkv) * d:].view(1, tb, hkv, d).transpose(1, 2)

    def silu_mul(gu: torch.Tensor) -> torch.Tensor:
        inter = gu.shape[-1] // 2
        return F.silu(gu[:, :inter]) * gu[:, inter:]

    if not compiled:
        return Kernels(rms, rope_split, silu_mul)
    c = lambda fn: torch.compile(fn, fullgraph=True)  # noqa: E731  (shapes: static first, then dynamic in T)
    return Kernels(c(rms), c(rope_split), c(silu_mul))


def _can_compile(device: torch.device) -> bool:
    if device.type != "cuda":
        return False
    try:
        import triton  # noqa: F401  (inductor's GPU code generator)
    except ImportError:
        return False
    return True


@dataclass
class PackedBlock:
    """One decoder block's weights in the layout the fast path reads."""

    ln1: torch.Tensor
    eps1: float
    wqkv: torch.Tensor  # ((H + 2 H_kv) D, hidden)
    bqkv: torch.Tensor | None
    qkn: torch.Tensor | None  # ((H + H_kv), D) QK-norm gains (q_norm per query head, then k_norm per KV head)
    wo: torch.Tensor
    ln2: torch.Tensor
    eps2: float
    wgu: torch.Tensor | None  # (2 I, hidden) when gate/up are fused
    wg: torch.Tensor
    wu: torch.Tensor
    wd: torch.Tensor


# Packed weights per model, shared by all its engines (N sessions on one GPU hold one copy).
_PACKED: "weakref.WeakKeyDictionary[DuplexLM, list[PackedBlock]]" = weakref.WeakKeyDictionary()


class FastEngine(Engine):
    """`Engine` with a static-shape CUDA-graph forward.

    mode: "auto" (graphs on CUDA, eager elsewhere), "eager" (always `Engine`'s path),
    "static" (the static-shape path without graph capture, on any device: for tests),
    "graph" (static path + CUDA graphs; needs CUDA). Switch at any time: `eng.mode = "eager"`.
    attention: "sdpa", "matmul", "fused" (1-token forwards; others sdpa; needs Triton) or "auto" (with graphs:
    the fastest per bucket, see `chosen`; else sdpa).
    fuse_mlp: pack gate/up into one matrix (costs a copy of them); None = when device memory allows.
    compile: fuse the elementwise stages with `torch.compile` (None = with graphs on CUDA when Triton is there).
    """

    def __init__(self, model: DuplexLM, max_slots: int = 8192, clock=None, *, mode: str = "auto",
                 attention: str = "auto", buckets: Iterable[int] = BUCKETS, fuse_mlp: bool | None = None,
                 compile: bool | None = None):
        super().__init__(model, max_slots, clock)
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        if attention not in ATTENTION:
            raise ValueError(f"unknown attention {attention!r}; use one of {', '.join(ATTENTION)}")
        if mode == "graph" and model.device.type != "cuda":
            raise ValueError("mode 'graph' needs a model on CUDA")
        if attention == "fused" and not fused_available(model.device):
            raise ValueError("attention 'fused' needs Triton and a CUDA model (or TRITON_INTERPRET=1)")
        self.mode = mode
        self.attention = attention
        self.chosen: dict[tuple[int, int], str] = {}  # (Tb, Lb) -> attention kernel of its graph
        self.preset: dict[tuple[int, int], str] = {}  # (Tb, Lb) -> a kernel chosen already (no timing of both)
        self.timings: dict[tuple[int, int], dict[str, float]] = {}  # replay ms per kernel when "auto" chose
        self.buckets = tuple(sorted(set(int(b) for b in buckets)))
        self.fuse_mlp = fuse_mlp
        self.compile = compile
        self.kernels: Kernels | None = None
        self.graphs: dict[tuple[int, int], tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}
        self.fast_forwards = 0  # forwards that took the static path (for tests and reports)
        self.blocks: list[PackedBlock] | None = None
        self.capture_seconds = 0.0  # what the last `upkeep` capture took: the next one waits for that much slack
        self._fused_off = False  # "auto" stops offering the fused kernel once it failed or disagreed
        self._partials: torch.Tensor | None = None  # the fused kernel's scratch, made at its first forward

    # ------------------------------------------------------------ which path
    @property
    def uses_static(self) -> bool:
        return self.mode in ("static", "graph") or (self.mode == "auto" and self.model.device.type == "cuda")

    @property
    def uses_graphs(self) -> bool:
        return self.mode == "graph" or (self.mode == "auto" and self.model.device.type == "cuda")

    def _forward(self, req: ForwardRequest) -> torch.Tensor:
        n_lin = sum(len(s) for s in req.linear)
        t = req.new_tokens
        tb = query_bucket(t, self.buckets)
        cache = self.cache
        if not self.uses_static or n_lin < 1 or tb is None or cache.length + tb > cache.max_slots:
            return super()._forward(req)
        self._ensure_ready()
        start, base = cache.length, cache.next_pos
        segs, kinds, pos, mask = forward_inputs(req, base)
        anc = None if mask is None else mask[n_lin:, n_lin:]  # the tree nodes' ancestor-or-self mask
        self._stage(tb, start, segs, pos, n_lin, anc)
        cache.reserve(pos, req.unit, kinds)
        hidden = self._run(tb, length_bucket(start + tb, cache.max_slots))
        self.fast_forwards += 1
        return self.model.lm.logits(hidden[0, n_lin - 1:t])

    # ------------------------------------------------------------ static buffers
    def _ensure_ready(self) -> None:
        if self.blocks is not None:
            return
        m, dev = self.model, self.model.device
        cfg = m.cfg.decoder
        tmax = max(self.buckets)
        self.x_ext = torch.zeros(tmax, cfg.hidden_size, dtype=m.dtype, device=dev)  # embedding rows
        self.meta = {tb: torch.zeros(_meta_len(tb), dtype=torch.int32, device=dev) for tb in self.buckets}
        cuda = dev.type == "cuda"
        self._host = [torch.zeros(_meta_len(tmax), dtype=torch.int32, pin_memory=cuda) for _ in range(2)]
        self._events = [torch.cuda.Event() if cuda else None for _ in range(2)]
        self._ring = 0
        self._templates: dict[tuple[int, int], torch.Tensor] = {}
        self.cols = torch.arange(self.cache.max_slots, device=dev)
        self.rows = torch.arange(tmax, device=dev)
        self._zero = torch.zeros((), dtype=m.dtype, device=dev)
        self._ninf = torch.full((), float("-inf"), dtype=m.dtype, device=dev)
        self._pool = torch.cuda.graph_pool_handle() if cuda else None
        self._cache_ptr = self.cache.k.data_ptr()
        if self.model not in _PACKED:
            _PACKED[self.model] = self._pack()
        self.blocks = _PACKED[self.model]
        cfg, eps = m.cfg.decoder, self.blocks[0].eps1
        compiled = (self.uses_graphs and _can_compile(dev)) if self.compile is None else self.compile
        self.kernels = make_kernels(cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim, eps, compiled)

    def _pack(self) -> list[PackedBlock]:
        layers = self.model.lm.model.layers
        fuse = self.fuse_mlp
        if fuse is None:
            gu_bytes = sum(2 * b.mlp.gate_proj.weight.numel() * b.mlp.gate_proj.weight.element_size() for b in layers)
            fuse = _free_bytes(self.model.device) > 2 * gu_bytes + (1 << 30)
        out = []
        for blk in layers:
            a, mlp = blk.self_attn, blk.mlp
            bias = qkn = None
            if a.q_proj.bias is not None:
                bias = torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]).detach()
            if a.q_norm is not None:
                qkn = torch.cat([a.q_norm.weight.expand(a.h, a.d), a.k_norm.weight.expand(a.hkv, a.d)]).detach()
            out.append(PackedBlock(
                ln1=blk.input_layernorm.weight.detach(), eps1=blk.input_layernorm.eps,
                wqkv=torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]).detach(), bqkv=bias, qkn=qkn,
                wo=a.o_proj.weight.detach(),
                ln2=blk.post_attention_layernorm.weight.detach(), eps2=blk.post_attention_layernorm.eps,
                wgu=torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]).detach() if fuse else None,
                wg=mlp.gate_proj.weight.detach(), wu=mlp.up_proj.weight.detach(), wd=mlp.down_proj.weight.detach()))
        return out

    def _fused_scratch(self) -> torch.Tensor:
        """The fused kernel's partials buffer, large enough for every bucket of the cache (made in a warm-up, outside
        any graph's pool; again only for a larger cache, whose graphs are all captured anew)."""
        cfg = self.model.cfg.decoder
        hkv = cfg.num_key_value_heads
        if self._partials is None or self._partials.shape[1] < fused_splits(self.cache.max_slots, hkv)[0]:
            self._partials = fused_scratch(hkv, cfg.num_attention_heads // hkv, cfg.head_dim,
                                                     self.cache.max_slots, self.model.device)
        return self._partials

    def refresh(self) -> None:
        """Re-pack the weights and drop captured graphs (after the model's weights changed)."""
        _PACKED.pop(self.model, None)
        self.graphs.clear()
        self.blocks = None
        self.kernels = None

    def _template(self, tb: int, t: int) -> torch.Tensor:
        """(tb, tb) int32: causal among the t real rows, each pad row sees only itself."""
        key = (tb, t)
        if key not in self._templates:
            m = torch.zeros(tb, tb, dtype=torch.int32)
            m[:t, :t] = torch.ones(t, t, dtype=torch.int32).tril()
            m[t:, t:] = torch.eye(tb - t, dtype=torch.int32)
            self._templates[key] = m
        return self._templates[key]

    def _stage(self, tb: int, start: int, segs: list[torch.Tensor], pos: torch.Tensor, n_lin: int,
               anc: torch.Tensor | None) -> None:
        """Write one forward's inputs into the static tensors: meta[tb] and the embedding rows of x_ext."""
        self._ring ^= 1
        ev = self._events[self._ring]
        if ev is not None:
            ev.synchronize()  # the copy out of this pinned buffer two forwards ago has run
        st = self._host[self._ring][:_meta_len(tb)]
        ids, ext, p = st[1:1 + tb], st[1 + tb:1 + 2 * tb], st[1 + 2 * tb:1 + 3 * tb]
        mask = st[1 + 3 * tb:].view(tb, tb)
        r = 0
        for seg in segs:
            k = seg.shape[0]
            if seg.dtype == torch.long and seg.device.type == "cpu":
                ids[r:r + k] = seg
                ext[r:r + k] = 0
            else:  # embeddings (or ids already on the device, embedded here)
                rows = self.model.lm.embed(seg) if seg.dtype == torch.long else seg
                self.x_ext[r:r + k].copy_(rows, non_blocking=True)
                ext[r:r + k] = 1
            r += k
        p[:r] = pos
        mask.copy_(self._template(tb, r))
        if anc is not None:
            mask[n_lin:r, n_lin:r] = anc
        st[0] = start
        self.meta[tb].copy_(st, non_blocking=True)
        if ev is not None:
            ev.record()

    # ------------------------------------------------------------ the static forward
    def _static(self, tb: int, lb: int, attention: str = "sdpa") -> torch.Tensor:
        """The decoder over static tensors: reads meta[tb], x_ext, writes cache slots start + [0, tb).

        Returns hidden states after the final norm (1, tb, hidden). Shapes depend on (tb, lb) only.
        """
        lm, cache = self.model.lm, self.cache
        cfg = lm.cfg
        h, hkv, d, dim = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim, cfg.hidden_size
        g, half = h // hkv, d // 2
        meta = self.meta[tb]
        fused = attention == "fused" and tb == 1
        attention = "sdpa" if attention == "fused" else attention  # the fused kernels take one token; more: sdpa
        ids, ext, pos = meta[1:1 + tb], meta[1 + tb:1 + 2 * tb] != 0, meta[1 + 2 * tb:1 + 3 * tb]

        if fused:  # the token attends to [0, start]: no mask; the kernels read start and write its K/V
            part = self._fused_scratch()
        else:
            start = meta[:1].long()
            new = meta[1 + 3 * tb:].view(tb, tb) != 0
            rel = self.cols[:lb] - start  # (lb,) slot index relative to the first new slot
            in_new = (rel >= 0) & (rel < tb)
            allowed = (new.index_select(1, rel.clamp(0, tb - 1)) & in_new) | (rel < 0)  # (tb, lb)
            mask = torch.where(allowed, self._zero, self._ninf)
            if g > 1:
                mask = mask.repeat(g, 1)  # (g*tb, lb): row gi*tb + t is query t of head gi
            slots = start + self.rows[:tb]

        x = torch.where(ext[:, None], self.x_ext[:tb], lm.model.embed_tokens(ids))[None]  # (1, tb, dim)
        x2 = x.view(tb, dim)
        cos, sin = rope_cos_sin(pos[None], d, cfg.rope_theta, x.dtype)  # (1, 1, tb, d)
        cos, sin = cos.transpose(1, 2), sin.transpose(1, 2)  # (1, tb, 1, d)
        sin = torch.cat([-sin[..., :half], sin[..., half:]], dim=-1)  # rotate-half's sign folded in
        kern = self.kernels
        if fused:
            cos1, sin1 = cos.reshape(d), sin.reshape(d)
        for i, b in enumerate(self.blocks):
            qkv = F.linear(kern.rms(x, b.ln1), b.wqkv, b.bqkv)  # (1, tb, (h + 2 hkv) d)
            kc, vc = cache.k[i], cache.v[i]  # (1, hkv, S_max, d)
            if fused:
                o = decode_attention(qkv, cos1, sin1, b.qkn, kc, vc, meta[:1], part, h, b.eps1, lb)
            else:
                q, k, v = kern.rope_split(qkv, cos, sin, b.qkn)
                kc.index_copy_(2, slots, k)
                vc.index_copy_(2, slots, v)
                o = _attend(q, kc[:, :, :lb], vc[:, :, :lb], mask, attention)  # (1, hkv, g*tb, d)
                o = o.unflatten(2, (g, tb)).permute(0, 3, 1, 2, 4).reshape(tb, h * d)
            x2.addmm_(o, b.wo.t())  # residual fused into the GEMM
            hn = kern.rms(x, b.ln2).view(tb, dim)
            if b.wgu is not None:
                act = kern.silu_mul(F.linear(hn, b.wgu))
            else:
                act = F.silu(F.linear(hn, b.wg)).mul_(F.linear(hn, b.wu))
            x2.addmm_(act, b.wd.t())
        return F.rms_norm(x, (dim,), lm.model.norm.weight, lm.model.norm.eps)

    # ------------------------------------------------------------ graphs
    def _run(self, tb: int, lb: int) -> torch.Tensor:
        if not self.uses_graphs:
            return self._static(tb, lb, self.attention if self.attention in ("matmul", "fused") else "sdpa")
        if self.cache.k.data_ptr() != self._cache_ptr:  # a new cache: graphs point at the old one
            self.graphs.clear()
            self._cache_ptr = self.cache.k.data_ptr()
        entry = self.graphs.get((tb, lb))
        if entry is None:
            entry = self.graphs[(tb, lb)] = self._capture(tb, lb)
        entry[0].replay()
        return entry[1]

    def _capture(self, tb: int, lb: int) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
        """The graph for (tb, lb); with attention "auto", the fastest kernel's graph (or the kernel
        `preset` names: what another engine of the same model chose, as `EnginePool` hands on)."""
        fixed = self.attention if self.attention != "auto" else self.preset.get((tb, lb))
        if fixed is not None:
            fixed = "sdpa" if fixed == "fused" and tb > 1 else fixed  # what `_static` runs for more than one token
            self.chosen[(tb, lb)] = fixed
            # a preset bucket's kernels ran (and compiled) in the engine that chose them: one warm-up is enough
            return self._capture_one(tb, lb, fixed, warmups=1 if (tb, lb) in self.preset else 2)
        best, times, errors, ref = None, {}, [], None
        fused = tb == 1 and not self._fused_off and fused_available(self.model.device)
        for kind in ("sdpa", "matmul") + (("fused",) if fused else ()):
            try:
                graph, out = self._capture_one(tb, lb, kind)
            except Exception as err:  # a kernel that cannot be captured (or compiled) here: keep the others
                errors.append(err)
                warnings.warn(f"FastEngine: {kind} attention not captured for bucket {tb}x{lb}: {err}")
                self._fused_off |= kind == "fused"  # and not offered again
                continue
            ms = _replay_ms(graph)  # the replays also leave this graph's output in `out`
            if kind != "fused" and ref is None:
                ref = out.clone()
            elif kind == "fused" and ref is not None and (out - ref).norm() > FUSED_AGREEMENT * ref.norm():
                warnings.warn(f"FastEngine: fused attention disagrees with {next(iter(times))} for bucket {tb}x{lb}; "
                              "not used")
                self._fused_off = True
                continue
            times[kind] = ms
            if best is None or times[kind] < times[best[0]]:
                best = (kind, graph, out)
        if best is None:
            raise errors[-1]
        self.chosen[(tb, lb)], self.timings[(tb, lb)] = best[0], times
        return best[1], best[2]  # `_run` replays it next, rewriting this forward's K/V

    def _capture_one(self, tb: int, lb: int, attention: str, warmups: int = 2
                     ) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
        return capture_graph(lambda: self._static(tb, lb, attention), self._pool, self.model.device, warmups)

    @torch.no_grad()
    def upkeep(self, budget: float) -> float:
        """Capture, in idle time, the nearest graph the coming forwards will need and nobody captured yet.

        A pool's engine is warmed up to a few thousand resident slots; a long session without eviction grows past
        them, and a capture inside a unit costs it a second at 7B. One graph per call, when the last capture's
        time fits `budget` seconds. Returns the seconds spent (0 when nothing was missing or it did not fit).
        """
        if not self.uses_graphs:
            return 0.0
        need = self.missing_ahead()
        if not need or budget <= 0.0 or budget < self.capture_seconds:
            return 0.0
        t0 = time.perf_counter()
        context, tb = need[0]
        self.warmup([context], [tb])
        if self.model.device.type == "cuda":
            torch.cuda.synchronize(self.model.device)
        self.capture_seconds = time.perf_counter() - t0
        return self.capture_seconds

    def missing_ahead(self, ahead: int = AHEAD_SLOTS) -> list[tuple[int, int]]:
        """(context, query bucket) of the forwards starting within `ahead` slots of the resident length whose
        graph is not captured, nearest first (one per graph)."""
        length, cap = self.cache.length, self.cache.max_slots
        contexts = sorted({length, *range(length - length % 64 + 64, length + ahead + 1, 64)})
        out, seen = [], set(self.graphs)
        for c in contexts:
            for tb in self.buckets:
                key = (tb, length_bucket(c + tb, cap))
                if c + tb <= cap and key not in seen:
                    seen.add(key)
                    out.append((c, tb))
        return out

    @torch.no_grad()
    def warmup(self, contexts: Iterable[int], buckets: Iterable[int] | None = None) -> int:
        """Capture now the graphs forwards at these resident lengths will use, so none is captured mid-session.

        Leaves the cache's contents and ledger as they were. Returns the number of graphs captured.
        """
        if not self.uses_graphs:
            return 0
        self._ensure_ready()
        cache, n = self.cache, 0
        for c in contexts:
            for tb in buckets or self.buckets:
                lb = length_bucket(c + tb, cache.max_slots)
                if c + tb > cache.max_slots or (tb, lb) in self.graphs:
                    continue
                saved = cache.k[:, :, :, c:c + tb].clone(), cache.v[:, :, :, c:c + tb].clone()
                self._stage(tb, c, [torch.zeros(tb, dtype=torch.long)], torch.zeros(tb, dtype=torch.long), tb, None)
                self.graphs[(tb, lb)] = self._capture(tb, lb)
                cache.k[:, :, :, c:c + tb], cache.v[:, :, :, c:c + tb] = saved
                n += 1
        return n


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, kind: str) -> torch.Tensor:
    """q (1, hkv, M, d), k/v (1, hkv, lb, d), additive mask (M, lb) -> (1, hkv, M, d)."""
    if kind == "sdpa":
        return masked_attention(q, k, v, mask)
    scores = torch.baddbmm(mask, q[0], k[0].transpose(1, 2), alpha=q.shape[-1] ** -0.5)  # (hkv, M, lb)
    return torch.bmm(torch.softmax(scores, dim=-1), v[0])[None]


def capture_graph(run: Callable[[], torch.Tensor], pool, device: torch.device, warmups: int = 1
                  ) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
    """`run` warmed up on a side stream, then captured into a CUDA graph (in `pool`): the graph and its output.
    Its staged inputs are real, so the warm-up writes what a replay writes."""
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmups):
            run()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=pool):
        out = run()
    return graph, out


def _replay_ms(graph: torch.cuda.CUDAGraph, reps: int = 5) -> float:
    graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / reps


def _meta_len(tb: int) -> int:
    return 1 + 3 * tb + tb * tb  # start | ids | is-embedding | positions | (tb, tb) mask


def _free_bytes(device: torch.device) -> int:
    if device.type != "cuda":
        return 1 << 62
    return torch.cuda.mem_get_info(device)[0]


__all__ = ["ATTENTION", "BUCKETS", "FastEngine", "Kernels", "PackedBlock", "make_kernels", "Segment", "length_bucket", "query_bucket"]
