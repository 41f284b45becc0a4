"""The fused 1-token attention kernels against the attention they replace, written out in torch.

Runs where Triton is installed: under its interpreter on a CPU (conftest sets TRITON_INTERPRET), compiled on CUDA.
The interpreter truncates float32 -> bf16 casts, so bf16 is checked on CUDA only (tests/test_fastpath_gpu.py).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ticktock.engine import decode_attention as da

pytestmark = pytest.mark.skipif(da.triton is None, reason="needs Triton")
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def reference(qkv, cos, sin, qkn, kc, vc, start: int, h: int, eps: float):
    """QK-norm, RoPE (sin with rotate-half's sign folded in), the new K/V at `start`, attention over [0, start]."""
    hkv, d = kc.shape[1], kc.shape[3]
    qk = qkv[:(h + hkv) * d].view(h + hkv, d)
    if qkn is not None:
        qk = qkn * F.rms_norm(qk.float(), (d,), None, eps).to(qk.dtype)
    qk = qk * cos + torch.cat([qk[:, d // 2:], qk[:, :d // 2]], -1) * sin
    kc, vc = kc.clone(), vc.clone()
    kc[0, :, start], vc[0, :, start] = qk[h:], qkv[(h + hkv) * d:].view(hkv, d)
    keys, vals = kc[0, :, :start + 1], vc[0, :, :start + 1]
    scores = torch.einsum("hgd,hnd->hgn", qk[:h].view(hkv, h // hkv, d), keys) * d ** -0.5
    return torch.einsum("hgn,hnd->hgd", scores.softmax(-1), vals).reshape(1, h * d), kc, vc


@pytest.mark.parametrize("h, hkv, d, qk_norm, slots, start, lb", [
    (4, 2, 16, False, 320, 0, 128),  # the first token: only itself
    (4, 2, 16, False, 320, 37, 128),
    (4, 1, 32, True, 320, 200, 256),  # QK-norm, 4 query heads per KV head
    (7, 1, 64, False, 1100, 1000, 1024),  # many splits, a group of 7 (padded to 16 rows)
    (5, 5, 64, False, 300, 130, 256),  # no GQA
])
def test_fused_decode_attention_equals_the_math(h, hkv, d, qk_norm, slots, start, lb):
    gen = torch.Generator().manual_seed(start)
    qkv = torch.randn((h + 2 * hkv) * d, generator=gen)
    cos, sin = torch.randn(d, generator=gen), torch.randn(d, generator=gen)
    qkn = torch.rand(h + hkv, d, generator=gen) + 0.5 if qk_norm else None
    kc, vc = torch.randn(1, hkv, slots, d, generator=gen), torch.randn(1, hkv, slots, d, generator=gen)
    kc[0, :, start:], vc[0, :, start:] = float("nan"), float("nan")  # slots past the token are never read
    want, k_want, v_want = reference(qkv, cos, sin, qkn, kc, vc, start, h, 1e-6)

    dev = lambda x: None if x is None else x.to(DEVICE)  # noqa: E731
    kc, vc = dev(kc), dev(vc)
    part = da.scratch(hkv, h // hkv, d, slots, DEVICE)
    got = da.decode_attention(dev(qkv), dev(cos), dev(sin), dev(qkn), kc, vc,
                              torch.tensor([start], dtype=torch.int32, device=DEVICE), part, h, 1e-6, lb)
    assert got.shape == (1, h * d)
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
    n = start + 1
    torch.testing.assert_close(kc[..., :n, :].cpu(), k_want[..., :n, :], atol=1e-6, rtol=1e-6)  # a GPU may fuse a
    torch.testing.assert_close(vc[..., :n, :].cpu(), v_want[..., :n, :], atol=0, rtol=0)  # multiply-add in RoPE
    assert torch.isnan(kc[..., n:, :]).all()  # nothing written past the token's slot


def test_splits_cover_the_span_in_whole_tiles():
    for hkv in (1, 4, 8, 28):
        for lb in (128, 320, 1024, 4096, 8192):
            ns, span = da.splits(lb, hkv)
            assert 1 <= ns <= max(1, da.PROGRAMS // hkv) and span % da.BLOCK_N == 0
            assert ns * span >= lb > (ns - 1) * span  # every slot in a split, no split wholly past the span
            assert ns <= da.splits(8192, hkv)[0]  # the scratch made for the largest cache holds every bucket's


COMPILE = """
import inspect, triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from ticktock.engine import decode_attention as da
types = dict(start_ptr="*i32", part="*fp32", scale="fp32", eps="fp32",
             **{n: "i32" for n in ("skh", "sks", "svh", "svs", "sph", "sps", "span", "ns", "H", "HKV")})
for g, qk_norm in ((7, False), (4, True)):  # the Qwen2.5-Omni thinker's and MiniCPM-o 4.5's groups
    const = dict(G=g, GP=16, D=128, QKN=qk_norm, F32=False, BLOCK=da.BLOCK_N, NSP=32)
    for fn in (da._partial, da._finish):
        names = list(inspect.signature(fn.fn).parameters)
        sig = {n: "constexpr" if n in const else types.get(n, "*bf16") for n in names}
        src = ASTSource(fn=fn, signature=sig, constexprs={(names.index(n),): v for n, v in const.items() if n in names})
        triton.compile(src, target=GPUTarget("cuda", 90, 32))
print("compiled")
"""


def test_fused_kernels_compile_for_hopper_in_bf16():
    """The kernels as a GPU would build them (bf16, head size 128, sm_90), compiled here without one: the CPU tests
    run them interpreted, which checks their arithmetic but not that Triton's compiler takes them."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {"TRITON_DEFAULT_FP_FUSION": "1"}
    run = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "compiled" in run.stdout, run.stderr[-3000:]
