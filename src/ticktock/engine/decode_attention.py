"""Attention of a 1-token forward in two Triton kernels (the fast engine's "fused" attention kernel).

A decoding step's attention is latency-bound: on the eager-shaped path it is QK-norm + RoPE, two cache
writes, the additive mask, scores, softmax and the product with V — six to eight small kernels per layer,
which at 7B cost about as much as a fifth of the weight reads (docs/models.md, "Full size"). Here:

1. `_partial`, grid (H_kv, splits): each program ropes its KV head's G query heads straight from the q/k/v
   projection's row and runs an online softmax over one split of the resident slots [0, start) (split-KV, so
   a long cache is read by many blocks), leaving (max, sum, weighted V) per query head in a scratch buffer.
2. `_finish`, grid (H,): per query head, ropes the new token's q and K, scores the token itself and merges
   the splits' partials (all read at once) into its output row; a KV head's first query head writes the
   token's K and V into the cache at slot `start`.

`start` is read on the device (the engine's staged meta), so one CUDA graph serves every cache length of
its bucket. Runs where Triton runs: CUDA, or anywhere under `TRITON_INTERPRET=1` (set before Triton is
imported; tests/conftest.py does so on a machine without CUDA).
"""

from __future__ import annotations

import os

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the CPU wheels come without Triton: the engine then offers sdpa and matmul only
    triton = None

BLOCK_N = 64  # cache slots per tile
PROGRAMS = 128  # target blocks per layer (H_kv x splits): enough to keep a GPU's SMs reading


def available(device: torch.device) -> bool:
    """Whether the fused kernels can run on `device` (Triton there, or its interpreter)."""
    if triton is None:
        return False
    return device.type == "cuda" or os.environ.get("TRITON_INTERPRET") == "1"


def splits(lb: int, hkv: int) -> tuple[int, int]:
    """(splits, slots per split) for an attention span of lb slots: about PROGRAMS blocks in all, whole tiles each."""
    ns = max(1, min(_cdiv(lb, BLOCK_N), PROGRAMS // hkv))
    span = _cdiv(_cdiv(lb, ns), BLOCK_N) * BLOCK_N
    return _cdiv(lb, span), span  # rounding up to tiles may leave fewer splits


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def scratch(hkv: int, g: int, d: int, max_slots: int, device: torch.device) -> torch.Tensor:
    """The partials' buffer for every bucket up to max_slots: (H_kv, splits, GP, d + 2) float32."""
    return torch.empty(hkv, splits(max_slots, hkv)[0], _rows(g), d + 2, dtype=torch.float32, device=device)


def _rows(g: int) -> int:
    return max(16, 1 << (g - 1).bit_length())  # tl.dot wants at least 16 rows


def decode_attention(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, qkn: torch.Tensor | None,
                     kc: torch.Tensor, vc: torch.Tensor, start: torch.Tensor, part: torch.Tensor,
                     h: int, eps: float, lb: int) -> torch.Tensor:
    """One new token's attention, its K/V written into the cache.

    qkv (…, (h + 2 h_kv) d) the token's projection (bias added); cos, sin (d,) of its position, sin with
    rotate-half's sign folded in (as `rope_split` takes them); qkn (h + h_kv, d) QK-norm gains or None;
    kc, vc (1, h_kv, S_max, d) this layer's cache; start (1,) int32 on the device: the token's slot (it
    attends to [0, start]); part: `scratch`; lb: the graph's attention span (slots the splits cover).
    Returns o (1, h d) in the cache's dtype.
    """
    hkv, d = kc.shape[1], kc.shape[3]
    g, (ns, span) = h // hkv, splits(lb, hkv)
    qkv = qkv.reshape(-1)
    gains = qkn if qkn is not None else qkv  # a placeholder pointer when QK-norm is off
    sk, sv = kc.stride(), vc.stride()
    assert sk[3] == 1 and sv[3] == 1 and part.is_contiguous() and ns <= part.shape[1], "cache or scratch layout"
    # products in float32 for a float32 cache, and under the interpreter (whose bf16 `tl.dot` is wrong)
    f32 = kc.dtype == torch.float32 or os.environ.get("TRITON_INTERPRET") == "1"
    common = dict(G=g, GP=part.shape[2], D=d, QKN=qkn is not None, F32=f32)
    _partial[(hkv, ns)](qkv, gains, cos, sin, kc, vc, start, part, sk[1], sk[2], sv[1], sv[2],
                        part.stride(0), part.stride(1), span, d ** -0.5, eps, BLOCK=BLOCK_N, **common)
    out = torch.empty(1, h * d, dtype=kc.dtype, device=kc.device)
    _finish[(h,)](qkv, gains, cos, sin, kc, vc, start, part, out, sk[1], sk[2], sv[1], sv[2],
                  part.stride(0), part.stride(1), ns, h, hkv, d ** -0.5, eps,
                  NSP=1 << (part.shape[1] - 1).bit_length(), **common)  # one build for every bucket
    return out


if triton is not None:

    @triton.jit
    def _roped(qkv, gains, cos, sin, heads, cols, eps, D: tl.constexpr, QKN: tl.constexpr):
        """Rows `heads` of the projection, QK-normed and rotated as `rope_split` does: (R, D) float32 holding
        values of the model's dtype."""
        dt = qkv.dtype.element_ty
        swap = (cols + D // 2) % D
        x = tl.load(qkv + heads[:, None] * D + cols[None, :]).to(tl.float32)
        xs = tl.load(qkv + heads[:, None] * D + swap[None, :]).to(tl.float32)
        if QKN:  # RMS over the head in float32, back to the dtype, then the gain
            r = (1.0 / tl.sqrt(tl.sum(x * x, axis=1) / D + eps))[:, None]
            x = (x * r).to(dt).to(tl.float32) * tl.load(gains + heads[:, None] * D + cols[None, :]).to(tl.float32)
            xs = (xs * r).to(dt).to(tl.float32) * tl.load(gains + heads[:, None] * D + swap[None, :]).to(tl.float32)
        c = tl.load(cos + cols).to(tl.float32)
        s = tl.load(sin + cols).to(tl.float32)
        return (x * c[None, :] + xs * s[None, :]).to(dt).to(tl.float32)

    @triton.jit
    def _partial(qkv, gains, cos, sin, kc, vc, start_ptr, part, skh, sks, svh, svs, sph, sps, span, scale, eps,
                 G: tl.constexpr, GP: tl.constexpr, D: tl.constexpr, QKN: tl.constexpr, F32: tl.constexpr,
                 BLOCK: tl.constexpr):
        kh, sp = tl.program_id(0), tl.program_id(1)
        start = tl.load(start_ptr)
        rows, cols = tl.arange(0, GP), tl.arange(0, D)
        heads = kh * G + tl.minimum(rows, G - 1)  # pad rows repeat the last head; never stored as output
        q = _roped(qkv, gains, cos, sin, heads, cols, eps, D, QKN).to(kc.dtype.element_ty)
        lo = sp * span
        hi = tl.minimum(lo + span, start)
        m = tl.full([GP], float("-inf"), tl.float32)
        l = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, D], tl.float32)
        for n0 in range(lo, hi, BLOCK):
            n = n0 + tl.arange(0, BLOCK)
            ok = n < hi
            k = tl.load(kc + kh * skh + n[:, None] * sks + cols[None, :], mask=ok[:, None], other=0.0)
            if F32:
                sc = tl.dot(q.to(tl.float32), tl.trans(k.to(tl.float32)), input_precision="ieee")
            else:
                sc = tl.dot(q, tl.trans(k))
            sc = tl.where(ok[None, :], sc * scale, float("-inf"))
            m_new = tl.maximum(m, tl.max(sc, axis=1))
            alpha = tl.exp(m - m_new)
            p = tl.exp(sc - m_new[:, None])
            l = l * alpha + tl.sum(p, axis=1)
            v = tl.load(vc + kh * svh + n[:, None] * svs + cols[None, :], mask=ok[:, None], other=0.0)
            if F32:
                pv = tl.dot(p.to(v.dtype).to(tl.float32), v.to(tl.float32), input_precision="ieee")
            else:
                pv = tl.dot(p.to(v.dtype), v)
            acc = acc * alpha[:, None] + pv
            m = m_new
        base = part + kh * sph + sp * sps + rows * (D + 2)  # a row: weighted V (D), max, sum
        real = rows < G
        tl.store(base[:, None] + cols[None, :], acc, mask=real[:, None])
        tl.store(base + D, m, mask=real)
        tl.store(base + D + 1, l, mask=real)

    @triton.jit
    def _finish(qkv, gains, cos, sin, kc, vc, start_ptr, part, out, skh, sks, svh, svs, sph, sps, ns, H, HKV,
                scale, eps, G: tl.constexpr, GP: tl.constexpr, D: tl.constexpr, QKN: tl.constexpr,
                F32: tl.constexpr, NSP: tl.constexpr):
        qh = tl.program_id(0)  # one query head per program: its splits' partials are read in one go
        kh, r = qh // G, qh % G
        start = tl.load(start_ptr)
        cols, one = tl.arange(0, D), tl.zeros([1], tl.int32)
        q = _roped(qkv, gains, cos, sin, qh + one, cols, eps, D, QKN)  # (1, D)
        k = _roped(qkv, gains, cos, sin, H + kh + one, cols, eps, D, QKN)
        v = tl.load(qkv + (H + HKV + kh + one)[:, None] * D + cols[None, :])  # (1, D), the model's dtype
        first = (tl.zeros([1, D], tl.int32) + r) == 0  # the KV head's first query head writes its K and V
        tl.store(kc + kh * skh + start * sks + cols[None, :], k.to(kc.dtype.element_ty), mask=first)
        tl.store(vc + kh * svh + start * svs + cols[None, :], v.to(vc.dtype.element_ty), mask=first)
        v = v.to(tl.float32)  # q and k hold values of the model's dtype already (`_roped`), as the cache does
        s_new = tl.sum(q * k, axis=1) * scale  # (1,)
        sp = tl.arange(0, NSP)
        base = part + kh * sph + sp * sps + r * (D + 2)  # (NSP,) this head's row in every split
        have = sp < ns
        m = tl.load(base + D, mask=have, other=float("-inf"))  # -inf also for a split without slots
        mx = tl.maximum(tl.max(m, axis=0), tl.max(s_new, axis=0))
        w = tl.exp(m - mx)
        w_new = tl.exp(s_new - mx)  # (1,)
        total = tl.sum(tl.load(base + D + 1, mask=have, other=0.0) * w, axis=0) + w_new
        acc = tl.sum(tl.load(base[:, None] + cols[None, :], mask=have[:, None], other=0.0) * w[:, None], axis=0)
        o = (acc[None, :] + w_new[:, None] * v) / total[:, None]  # (1, D)
        tl.store(out + qh * D + cols[None, :], o.to(out.dtype.element_ty))

__all__ = ["BLOCK_N", "available", "decode_attention", "scratch", "splits"]
