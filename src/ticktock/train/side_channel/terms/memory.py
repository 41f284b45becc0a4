"""`memory` and `recall`: memory examples' targets, learnt by cross-entropy.

* ``memory`` — the native outputs of a memory example's supervised units over an evicted context (the base never
  saw one, so there is nothing to distil);
* ``recall`` — the same at recall answers only: an answer's few fact tokens weigh little among hundreds in
  ``memory``'s mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..registry import TERMS, register
from .base import Step, Term


@register(TERMS, "memory")
@dataclass
class MemoryCE(Term):
    def __call__(self, step: Step) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
        m = step.memory
        if m is None:
            return None, {}
        mem = m.ce.mean()
        return mem, {"mem": mem.detach(), "mem_acc": m.right.mean()}


@register(TERMS, "recall")
@dataclass
class RecallCE(Term):
    def __call__(self, step: Step) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
        m = step.memory
        if m is None or not m.at_answer.any():
            return None, {}
        recall = m.ce[m.at_answer].mean()
        return recall, {"recall": recall.detach(), "recall_acc": m.right[m.at_answer].mean()}
