"""Preallocated KV cache with a slot ledger (docs/design.md §3).

Physical slots hold K (after RoPE) and V for every layer; the ledger says, per
slot, its logical position, unit index and kind. Eviction compacts physical
slots but never changes a survivor's logical position, and the next token's
logical position keeps advancing (`next_pos`), so positions are never reused
except by `truncate`/`restore`, which roll back provisional (draft) tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..protocol import SlotKind


@dataclass(frozen=True)
class Snapshot:
    length: int
    next_pos: int
    version: int  # bumps on every compaction; a snapshot cannot survive one


class KVCache:
    """K/V buffers of shape (L, B, H_kv, S_max, D) plus the ledger (S_max,) per field."""

    def __init__(self, n_layers: int, n_kv_heads: int, head_dim: int, max_slots: int,
                 batch: int = 1, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"):
        shape = (n_layers, batch, n_kv_heads, max_slots, head_dim)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)
        self.pos = torch.zeros(max_slots, dtype=torch.long)
        self.unit = torch.zeros(max_slots, dtype=torch.long)
        self.kind = torch.zeros(max_slots, dtype=torch.int8)
        self.max_slots = max_slots
        self.length = 0
        self.next_pos = 0
        self.version = 0
        self.start = 0  # first slot of the forward in flight (layers write there)
        self.peak = 0

    # ------------------------------------------------------------ append
    def reserve(self, positions: torch.Tensor, unit: int, kinds: torch.Tensor | list[int]) -> int:
        """Claim len(positions) slots for the forward about to run; layers then `write` into them.

        positions: (T,) logical positions; kinds: (T,) SlotKind values. Returns the first slot.
        """
        t = positions.numel()
        if self.length + t > self.max_slots:
            raise RuntimeError(f"KV cache full: {self.length} + {t} slots > capacity {self.max_slots}; "
                               "use an eviction policy or a larger cache")
        s, e = self.length, self.length + t
        self.pos[s:e] = positions.cpu()
        self.unit[s:e] = unit
        self.kind[s:e] = torch.as_tensor(kinds, dtype=torch.int8)
        self.start, self.length = s, e
        self.next_pos = max(self.next_pos, int(positions.max()) + 1)
        self.peak = max(self.peak, e)
        return s

    def write(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store this layer's new K/V (B, H_kv, T, D) at the reserved slots; return all resident K/V."""
        s, e = self.start, self.length
        assert k.shape[2] == e - s, f"expected {e - s} new slots, got k of shape {tuple(k.shape)}"
        self.k[layer, :, :, s:e] = k
        self.v[layer, :, :, s:e] = v
        return self.k[layer, :, :, :e], self.v[layer, :, :, :e]

    def write_layers(self, k: torch.Tensor, v: torch.Tensor) -> None:
        """Store every layer's new K/V (L, B, H_kv, T, D) at the reserved slots at once."""
        s, e = self.start, self.length
        assert k.shape[3] == e - s, f"expected {e - s} new slots, got k of shape {tuple(k.shape)}"
        self.k[:, :, :, s:e] = k
        self.v[:, :, :, s:e] = v

    # ------------------------------------------------------------ verbs
    def truncate(self, n: int) -> None:
        """Drop slots [n, length) — the rollback after a draft. Positions after the survivors are free again."""
        assert 0 <= n <= self.length
        self.length = n
        self.next_pos = int(self.pos[n - 1]) + 1 if n else 0

    def keep(self, slots: torch.Tensor) -> None:
        """Compact the cache to `slots` (ascending physical indices); logical positions travel with them."""
        slots = slots.to(torch.long).cpu()
        n = slots.numel()
        dev = slots.to(self.k.device)
        self.k[:, :, :, :n] = self.k[:, :, :, dev]
        self.v[:, :, :, :n] = self.v[:, :, :, dev]
        self.pos[:n] = self.pos[slots].clone()
        self.unit[:n] = self.unit[slots].clone()
        self.kind[:n] = self.kind[slots].clone()
        self.length = n
        self.version += 1

    def commit_path(self, start: int, path: list[int]) -> None:
        """Keep slots [0, start) and the accepted tree nodes `path` (physical slots ≥ start), compacted.

        The next position follows the last kept slot, so a rejected branch's positions are reused.
        """
        if path == list(range(start, start + len(path))):  # accepted a prefix: no data moves
            self.truncate(start + len(path))
            return
        src = torch.tensor(path, dtype=torch.long)
        dst = slice(start, start + len(path))
        self.k[:, :, :, dst] = self.k[:, :, :, src.to(self.k.device)]
        self.v[:, :, :, dst] = self.v[:, :, :, src.to(self.v.device)]
        for led in (self.pos, self.unit, self.kind):
            led[dst] = led[src].clone()
        self.truncate(start + len(path))

    def evict(self, slot_ids: torch.Tensor | list[int]) -> None:
        """Remove these physical slots; survivors keep their logical positions and `next_pos` keeps advancing."""
        drop = torch.zeros(self.length, dtype=torch.bool)
        drop[torch.as_tensor(slot_ids, dtype=torch.long)] = True
        nxt = self.next_pos
        self.keep(torch.nonzero(~drop).flatten())
        self.next_pos = nxt

    def snapshot(self) -> Snapshot:
        return Snapshot(self.length, self.next_pos, self.version)

    def restore(self, snap: Snapshot) -> None:
        """Roll back to a snapshot: everything appended since is dropped."""
        if snap.version != self.version:
            raise RuntimeError("cache was compacted after the snapshot; cannot restore")
        self.length, self.next_pos = snap.length, snap.next_pos

    # ------------------------------------------------------------ views
    def ledger(self) -> dict[str, torch.Tensor]:
        n = self.length
        return {"pos": self.pos[:n].clone(), "unit": self.unit[:n].clone(), "kind": self.kind[:n].clone()}

    def slots_of(self, kind: SlotKind) -> torch.Tensor:
        return torch.nonzero(self.kind[: self.length] == int(kind)).flatten()

    def reset(self) -> None:
        self.length = self.next_pos = self.start = self.peak = 0
        self.version += 1
