"""KV cache property tests: after random append / truncate / evict / commit_path / restore,
attention over the cache equals a recompute over the surviving slots at their logical positions."""

from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F

from ticktock.cache import KVCache
from ticktock.model.transformer import apply_rope, rope_cos_sin

H, D, L = 2, 8, 2


def roped(raw: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """raw (1, H, T, D) at logical positions pos (T,) -> post-RoPE keys."""
    cos, sin = rope_cos_sin(pos[None], D, 10000.0, raw.dtype)
    return apply_rope(raw, cos, sin)


class Mirror:
    """The obviously-right model of the cache: a list of (raw k, v, pos, unit) per surviving slot."""

    def __init__(self):
        self.slots: list[tuple[torch.Tensor, torch.Tensor, int, int]] = []

    def attend(self, q: torch.Tensor, qpos: int) -> torch.Tensor:
        k = torch.stack([s[0] for s in self.slots], dim=1)[None]  # (1, H, S, D)
        v = torch.stack([s[1] for s in self.slots], dim=1)[None]
        pos = torch.tensor([s[2] for s in self.slots])
        return F.scaled_dot_product_attention(roped(q, torch.tensor([qpos])), roped(k, pos), v)


def append(cache: KVCache, mirror: Mirror, positions: list[int], unit: int, gen: torch.Generator) -> None:
    t = len(positions)
    raw_k = torch.randn(1, H, t, D, generator=gen)
    v = torch.randn(1, H, t, D, generator=gen)
    pos = torch.tensor(positions)
    cache.reserve(pos, unit, [2] * t)
    for layer in range(L):
        cache.write(layer, roped(raw_k, pos), v)
    for i in range(t):
        mirror.slots.append((raw_k[0, :, i], v[0, :, i], positions[i], unit))


def check(cache: KVCache, mirror: Mirror, gen: torch.Generator) -> None:
    n = cache.length
    assert n == len(mirror.slots)
    assert cache.pos[:n].tolist() == [s[2] for s in mirror.slots]
    assert cache.unit[:n].tolist() == [s[3] for s in mirror.slots]
    if n == 0:
        return
    q = torch.randn(1, H, 1, D, generator=gen)
    qpos = cache.next_pos
    got = F.scaled_dot_product_attention(roped(q, torch.tensor([qpos])), cache.k[1, :, :, :n], cache.v[1, :, :, :n])
    torch.testing.assert_close(got, mirror.attend(q, qpos), atol=1e-5, rtol=0)


@pytest.mark.parametrize("seed", range(12))
def test_random_verbs_match_recompute(seed):
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    cache, mirror = KVCache(L, H, D, 512), Mirror()
    unit = 0
    seen_positions: list[int] = []
    for _ in range(60):
        op = rng.choice(["append", "append", "tree", "truncate", "evict", "fork"])
        if op == "append":
            t = rng.randint(1, 6)
            append(cache, mirror, list(range(cache.next_pos, cache.next_pos + t)), unit, gen)
            unit += 1
        elif op == "tree":  # a draft tree: nodes at depth-based positions, keep one root-to-leaf path
            start, base = cache.length, cache.next_pos
            parents = [-1]
            for i in range(1, rng.randint(2, 8)):
                parents.append(rng.randint(-1, i - 1))
            depth = []
            for p in parents:
                depth.append(1 if p < 0 else depth[p] + 1)
            append(cache, mirror, [base + d - 1 for d in depth], unit, gen)
            node = rng.randrange(len(parents))
            path = []
            while node >= 0:
                path.append(node)
                node = parents[node]
            path = path[::-1][: rng.randint(0, len(path))]
            cache.commit_path(start, [start + j for j in path])
            mirror.slots = mirror.slots[:start] + [mirror.slots[start + j] for j in path]
            assert cache.next_pos == (mirror.slots[-1][2] + 1 if mirror.slots else 0)
        elif op == "truncate" and cache.length:
            n = rng.randint(0, cache.length)
            cache.truncate(n)
            mirror.slots = mirror.slots[:n]
        elif op == "evict" and cache.length > 1:
            nxt = cache.next_pos
            drop = sorted(rng.sample(range(cache.length - 1), rng.randint(1, cache.length - 1)))
            cache.evict(drop)
            mirror.slots = [s for i, s in enumerate(mirror.slots) if i not in set(drop)]
            assert cache.next_pos == nxt, "eviction must not move the next logical position back"
        elif op == "fork":  # draft on a fork, then roll back
            snap = cache.snapshot()
            before = list(mirror.slots)
            append(cache, mirror, list(range(cache.next_pos, cache.next_pos + 3)), unit, gen)
            cache.restore(snap)
            mirror.slots = before
        check(cache, mirror, gen)
        pos = cache.pos[: cache.length].tolist()
        assert pos == sorted(set(pos)), "resident logical positions are strictly increasing"
        seen_positions.append(cache.next_pos)


def test_restore_after_compaction_is_refused():
    cache = KVCache(1, 1, 4, 16)
    cache.reserve(torch.arange(4), 0, [0] * 4)
    snap = cache.snapshot()
    cache.evict([0])
    with pytest.raises(RuntimeError):
        cache.restore(snap)


def test_full_cache_says_so():
    cache = KVCache(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match="KV cache full"):
        cache.reserve(torch.arange(5), 0, [0] * 5)
