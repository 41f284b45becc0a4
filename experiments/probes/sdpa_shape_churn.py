"""Masked SDPA on CUDA when every call brings a new key length (a cache growing by a slot each forward, as in a
batch of live sessions): the default backend choice against the memory-efficient kernel that
`ticktock.model.transformer.masked_attention` pins. Prints ms per call for each.

    python experiments/probes/sdpa_shape_churn.py  # on a GPU
"""

import time

import torch
import torch.nn.functional as F

from ticktock.model.transformer import masked_attention


def per_call_ms(attend, calls: int = 64, heads: int = 32, d: int = 128, start: int = 1000) -> float:
    q = torch.randn(1, heads, 1, d, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(2, 1, heads, start + calls, d, device="cuda", dtype=torch.bfloat16)
    attend(q, kv[0, :, :, :start], kv[1, :, :, :start], torch.ones(1, start, dtype=torch.bool, device="cuda"))
    torch.cuda.synchronize()
    t = time.perf_counter()
    for s in range(start + 1, start + calls + 1):  # a new key length every call
        attend(q, kv[0, :, :, :s], kv[1, :, :, :s], torch.ones(1, s, dtype=torch.bool, device="cuda"))
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / calls * 1e3


if __name__ == "__main__":
    default = per_call_ms(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m))
    pinned = per_call_ms(masked_attention)
    print(f"masked SDPA, a new key length each call: default backends {default:.3f} ms/call, "
          f"memory-efficient {pinned:.3f} ms/call")
