"""The session's hypothesis pool: every draft ever made, indexed by n-gram (Speculative Listening step 3)."""

from __future__ import annotations



class HypothesisPool:
    """n-gram (n ≤ `order`) -> where it occurs in stored sequences; newest occurrence wins."""

    def __init__(self, order: int = 3):
        self.order = order
        self.seqs: list[list[int]] = []
        self.index: dict[tuple[int, ...], tuple[int, int]] = {}

    def add(self, seq: list[int]) -> None:
        if not seq:
            return
        sid = len(self.seqs)
        self.seqs.append(list(seq))
        for end in range(1, len(seq)):  # the n-gram ends at `end - 1`; its continuation starts at `end`
            for n in range(1, min(self.order, end) + 1):
                self.index[tuple(seq[end - n : end])] = (sid, end)

    def lookup(self, history: list[int], max_len: int) -> list[int]:
        """The continuation of the longest suffix n-gram of `history` found in the pool (maybe empty)."""
        for n in range(min(self.order, len(history)), 0, -1):
            hit = self.index.get(tuple(history[-n:]))
            if hit is not None:
                sid, end = hit
                return self.seqs[sid][end : end + max_len]
        return []

    def __len__(self) -> int:
        return len(self.seqs)


