"""The base of the loss terms: `Step` (one training step, what a term reads) and `Term`; the package imports every registered one."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import torch
import torch.nn.functional as F

from ....model import DuplexLM
from ....protocol import DuplexProtocol
from ...examples import IGNORE
from ...trainer import embed_inputs


@dataclass
class Native:
    """The native prediction positions, paired by order between student and teacher (segments shift the student)."""

    p_t: torch.Tensor  # (N, V) the teacher's distribution, renormalised without the two ASR tokens
    logp_t: torch.Tensor  # (N, V)
    logp_s: torch.Tensor  # (N, V) the student's log-probabilities
    fed: torch.Tensor  # (N,) the native token that actually follows


@dataclass
class Memory:
    """The memory targets of a batch (`memory_labels`): per token cross-entropy, argmax right, at a recall answer."""

    ce: torch.Tensor  # (M,)
    right: torch.Tensor  # (M,) float
    at_answer: torch.Tensor  # (M,) bool


@dataclass(eq=False)
class Step:
    protocol: DuplexProtocol
    model: DuplexLM
    b: dict[str, torch.Tensor]
    h: torch.Tensor  # (B, T, D) the student's hidden states
    emb: torch.Tensor  # (B, U*E, D) the audio embeddings both sequences read
    teacher: Callable[[DuplexLM], AbstractContextManager[DuplexLM]]  # the base, frozen (`adapters.Adapter.teacher`)

    @cached_property
    def zero(self) -> torch.Tensor:
        return self.h.sum() * 0.0  # keeps the graph when a batch holds nothing for a term

    @cached_property
    def native(self) -> Native | None:
        """None when the batch holds no native event to distil (memory examples only)."""
        b, m = self.b, self.model
        nmask, tnmask = b["labels"] != IGNORE, b["t_labels"] != IGNORE
        if not tnmask.any():
            return None
        with torch.no_grad(), self.teacher(m) as t:
            ht = t.lm(embed_inputs(t, b["t_ids"], b["t_slot"], self.emb), b["t_pos"])
            zt = t.lm.logits(ht[tnmask])  # (N, V)
            zt[:, [self.protocol.id("asr_start"), self.protocol.id("asr_end")]] = float("-inf")  # the base never writes them
            p_t, logp_t = zt.softmax(-1), zt.log_softmax(-1).clamp_min(-1e4)
        logp_s = m.lm.logits(self.h[nmask]).log_softmax(-1)
        assert logp_s.shape == p_t.shape, f"native events: student {tuple(logp_s.shape)} vs teacher {tuple(p_t.shape)}"
        return Native(p_t, logp_t, logp_s, b["labels"][nmask])

    @cached_property
    def memory(self) -> Memory | None:
        mmask = self.b["mem_labels"] != IGNORE
        if not mmask.any():
            return None
        logits, labels = self.model.lm.logits(self.h[mmask]), self.b["mem_labels"][mmask]
        token_ce = F.cross_entropy(logits, labels, reduction="none")
        return Memory(token_ce, (logits.argmax(-1) == labels).float().detach(), self.b["recall"][mmask])


@dataclass
class Term:
    """`weight` × this term enters the loss; `__call__` gives its value (None: nothing in this batch) and stats."""

    name: ClassVar[str]
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise ValueError(f"term {self.name!r}: weight must be non-negative, got {self.weight}")

    def __call__(self, step: Step) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
        raise NotImplementedError

