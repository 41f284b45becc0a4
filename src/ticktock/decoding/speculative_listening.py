"""Speculative Listening: decode the next unit before its audio arrives, verify inside its prefill.

"Decode Before You Hear: Speculative Listening for Chunk-Interleaved Full-Duplex
Speech Language Models" (method steps 1–6; docs/design.md §6):

1. draft — in the idle window after unit t−1, on a fork of the cache, append the
   silence hypothesis `a_sil` (the encoder's output for a silent chunk with the
   real left context) and decode greedily until the unit ends or the window does;
2. runner-up — if time remains, more branches from the best first tokens other
   than the draft's (`branches` = 2 is the paper; more is a small draft tree);
3. pool — every draft goes into an n-gram-indexed session hypothesis pool;
4. verify in the prefill — the fork is rolled back and the real audio's forward
   carries the draft tree; `verify` accepts the longest matching path;
5. continue from the pool — every further forward first tries the continuation
   of the longest pool n-gram matching the committed suffix;
6. sampling — the same drafts, verified with the sampling rule.

The `<unit>` slot is prefilled by the session before drafting and shared by the
fork and the real pass. Components switch off for the ablation: `sl-silence`
(step 1 only), `sl-runnerup` (1–2), `sl` (all). `sl-branch` adds branches at the
main draft's least certain positions (beyond the paper; `MarginBranching`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Generator

import torch
from torch import Tensor

from ..protocol import SlotKind
from .base import Decoder
from .draft import Draft
from .hypothesis_pool import HypothesisPool
from .idle import IdleContext, IdleSteps
from .verify import Verdict

if TYPE_CHECKING:
    from ..engine.eager import ForwardRequest


@dataclass
class SpeculativeListening(Decoder):
    name: ClassVar[str] = "sl"
    branches: int = 2  # main draft + runner-up branches (first tokens ranked by the silence logits)
    use_pool: bool = True
    pool_order: int = 3
    pool_lookahead: int = 32  # tokens proposed from the pool per forward
    first: Draft | None = field(default=None, init=False)
    last_main: list[int] | None = field(default=None, init=False)
    pool: HypothesisPool = field(default_factory=HypothesisPool, init=False)
    stats: dict = field(default_factory=dict, init=False)

    def reset(self) -> None:
        self.first = None
        self.pool = HypothesisPool(self.pool_order)

    # ------------------------------------------------------------ idle window
    def prepare(self, ctx: IdleContext, window: float) -> float:
        """Draft unit `ctx.unit` under the silence hypothesis; returns idle seconds used."""
        return ctx.drive(self.prepare_steps(ctx, window))

    @torch.no_grad()
    def prepare_steps(self, ctx: IdleContext, window: float) -> IdleSteps:
        proto, cache = ctx.protocol, ctx.cache
        time_left = lambda: ctx.seconds() < window  # noqa: E731
        chains: list[list[int]] = []
        branches: list[list[int]] = []
        with ctx.fork():
            root = (yield ctx.silence_request())[-1]
            ranked = root.topk(min(self.branches, root.numel())).indices.tolist()
            after_audio = cache.length
            for first in ranked:
                if chains and not time_left():
                    break
                cache.truncate(after_audio)
                chains.append((yield from self._greedy(ctx, first, time_left)))
                if len(chains) == 1:  # while the fork still holds the main draft
                    branches = yield from self._branch(ctx, chains[0], self.margins, after_audio, time_left)
        unit = proto.id("unit")
        for c in chains + branches:
            self.pool.add([unit, *c])
        labels = ["main"] + ["runnerup"] * (len(chains) - 1) + ["branch"] * len(branches)
        main = chains[0] if chains else []
        # the whole-unit greedy output under silence, when drafting reached the unit's end (for agreement stats)
        self.last_main = main if main and proto.is_unit_end(main[-1], len(main)) else None
        drafts = [Draft.chain(c, source=lab) for c, lab in zip(chains + branches, labels)]
        self.first = Draft.merge(*drafts) if drafts else None
        return ctx.seconds()

    def _greedy(self, ctx: IdleContext, first: int, time_left: Callable[[], bool], prefix: list[int] = ()
                ) -> Generator[ForwardRequest, Tensor, list[int]]:
        """Greedy continuation of `prefix + [first]` on the fork (whose cache holds `prefix`) until the
        unit would end or time runs out. Records each drafted position's top-2 margin in `self.margins`."""
        out = [*prefix, first]
        self.margins = {}
        while not ctx.protocol.is_unit_end(out[-1], len(out)) and time_left():
            top = (yield ctx.ids_request(out[-1:], SlotKind.TEXT))[-1].topk(2)
            self.margins[len(out)] = (float(top.values[0] - top.values[1]), int(top.indices[1]))
            out.append(int(top.indices[0]))
        return out

    def _branch(self, ctx: IdleContext, main: list[int], margins: dict, after_audio: int,
                time_left: Callable[[], bool]) -> Generator[ForwardRequest, Tensor, list[list[int]]]:
        """Alternative chains at the main draft's least certain positions (none in the paper's `sl`).

        margins: position i of `main` -> (top-2 logit margin there, the runner-up token); the fork's
        cache holds `main` when this is called."""
        return []
        yield  # unreachable: makes this a generator

    # ------------------------------------------------------------ post-audio
    def propose(self, history: list[int], max_len: int) -> Draft | None:
        if self.first is not None:  # the first forward of the unit: the audio prefill carries the drafts
            draft, self.first = self.first.truncate_depth(max_len), None
            return draft
        if not self.use_pool or max_len <= 0:
            return None
        cont = self.pool.lookup(history, min(max_len, self.pool_lookahead))
        return Draft.chain(cont, source="pool") if cont else None

    def observe(self, history: list[int], draft: Draft | None, logits: Tensor, verdict: Verdict) -> None:
        pass


@dataclass
class MarginBranching(SpeculativeListening):
    """`sl` plus branches where the silence draft is least sure (beyond the paper).

    The draft made under silence goes wrong where the real last chunk decides a token the
    silence hypothesis could not: a tool argument, a number, the word after a pause. Those
    are the positions where the draft's top-2 logit margin is small. With idle time left,
    the main draft is forked at its `max_branches` lowest-margin positions (margin below
    `max_margin`): the runner-up token there, then greedy to the unit's end. All branches
    share the main draft's prefix in one tree (at most `max_nodes` nodes), verified in the
    same audio prefill. Lossless like every draft: `verify` decides.
    """

    name: ClassVar[str] = "sl-branch"
    max_branches: int = 3
    max_margin: float = 2.0
    max_nodes: int = 64

    def _branch(self, ctx, main, margins, after_audio, time_left):
        cache, out, nodes = ctx.cache, [], len(main) + 1
        weak = sorted((m, i, alt) for i, (m, alt) in margins.items() if m < self.max_margin)[: self.max_branches]
        # latest position first: a branch at i rewrites the fork past main[:i], which earlier ones keep
        for _, i, alt in sorted(weak, key=lambda w: -w[1]):
            if not time_left() or nodes + len(main) - i > self.max_nodes:
                break
            cache.truncate(after_audio + i)  # the fork holds main[:i]; feed the alternative next
            chain = yield from self._greedy(ctx, alt, time_left, prefix=main[:i])
            nodes += len(chain) - i
            out.append(chain)
        return out


@dataclass
class SilenceOnly(SpeculativeListening):
    name: ClassVar[str] = "sl-silence"
    branches: int = 1
    use_pool: bool = False


@dataclass
class SilenceRunnerUp(SpeculativeListening):
    name: ClassVar[str] = "sl-runnerup"
    use_pool: bool = False
