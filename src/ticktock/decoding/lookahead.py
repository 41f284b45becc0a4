"""Lookahead decoding (Fu et al. 2024, "Break the Sequential Dependency of LLM Inference
Using Lookahead Decoding").

Two branches share each forward:

* the **Jacobi window**: ``W`` guesses for the next ``W`` positions, verified as a chain
  (labelled 'jacobi'). The row after window node ``i - 1`` is the model's next guess for
  position ``i`` (one Jacobi iteration per forward). Every window position also yields an
  n-gram: the ``N - 1`` tokens before it (history, then window) + the new guess, which
  goes into a pool keyed by its first token;
* the **verification branch**: up to ``G`` pool n-grams keyed by the last committed token,
  each proposing its ``N - 1`` continuation tokens (labelled 'pool').

After a step that commits ``c`` tokens the refined window shifts left by ``c``; the slots
freed at its end get random tokens from the history (as the paper initialises the window).
This keeps one Jacobi level instead of the paper's ``N - 1``; acceptance is decided by
`verify` anyway, so it stays lossless.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import ClassVar

from torch import Tensor

from ticktock.decoding.base import Decoder
from ticktock.decoding.draft import Draft
from ticktock.decoding.verify import Verdict


@dataclass
class LookaheadDecoder(Decoder):
    name: ClassVar[str] = "lookahead"
    window: int = 7  # W: Jacobi window width
    ngram: int = 5  # N: n-gram size (proposals of N - 1 tokens)
    guesses: int = 7  # G: most pool n-grams verified per forward
    pool_per_key: int = 64  # n-grams kept per first token (least recently seen dropped)
    seed: int = 0
    pool: dict[int, OrderedDict[tuple[int, ...], None]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        assert self.window >= 1 and self.ngram >= 2, f"need W >= 1 and N >= 2, got {self.window}, {self.ngram}"
        self.reset()

    def reset(self) -> None:
        self.pool = {}
        self._rng = random.Random(self.seed)
        self._guess: list[int] = []  # Jacobi window for positions len(history) ...
        self._at = -1  # len(history) the window is aligned to

    def propose(self, history: list[int], max_len: int) -> Draft | None:
        if not history or max_len <= 0:
            return None
        if self._at != len(history) or len(self._guess) != self.window:
            self._guess = [self._rng.choice(history) for _ in range(self.window)]
            self._at = len(history)
        grams = list(self.pool.get(history[-1], {}))[-self.guesses :][::-1]  # most recent first
        # a tight max_len is shared: half for the window (so it keeps refining), the rest for the pool
        w = min(self.window, max(1, max_len // 2) if grams else max_len)
        jacobi = Draft.chain(self._guess[:w], source="jacobi")
        pool = [Draft.chain(g, source="pool") for g in grams]
        return Draft.merge(jacobi, *pool).truncate_nodes(max_len)

    def observe(self, history: list[int], draft: Draft | None, logits: Tensor, verdict: Verdict) -> None:
        if draft is None or self._at != len(history) or not self._guess:
            return
        # find the window chain in the draft (the engine may have merged or cut it)
        index, rows, node = draft.child_index(), [0], -1
        for tok in self._guess:
            node = index.get((node, tok), -2)
            if node < 0:
                break
            rows.append(node + 1)
        new = logits[rows].argmax(-1).tolist()  # new[i]: guess for position i after window[:i]
        seq = history[-(self.ngram - 1) :] + self._guess
        off = len(seq) - len(self._guess)  # index of window position 0 in seq
        for i, tok in enumerate(new):
            if off + i >= self.ngram - 1:
                self._add(tuple(seq[off + i - self.ngram + 1 : off + i]) + (tok,))
        refined = new + self._guess[len(new) :]  # unrefined tail stays
        c = len(verdict.tokens)
        fresh = refined[c : c + self.window]
        pad = history + verdict.tokens
        self._guess = fresh + [self._rng.choice(pad) for _ in range(self.window - len(fresh))]
        self._at = len(history) + c

    def _add(self, gram: tuple[int, ...]) -> None:
        bucket = self.pool.setdefault(gram[0], OrderedDict())
        bucket[gram[1:]] = None
        bucket.move_to_end(gram[1:])
        while len(bucket) > self.pool_per_key:
            bucket.popitem(last=False)
