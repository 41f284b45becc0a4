"""The side-channel loss: Σ weight × term over a recipe's terms (`terms/`), for the trainer."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...model import DuplexLM
from ...protocol import DuplexProtocol
from ..trainer import audio_embeddings, embed_inputs
from .adapters import Adapter
from .batches import runtime_mask
from .terms import Step, Term


@dataclass
class SideChannelLoss:
    """Callable (model, batch) -> (loss, stats)."""

    protocol: DuplexProtocol
    adapter: Adapter
    terms: list[Term]

    def __call__(self, model: DuplexLM, b: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        with torch.no_grad():  # the audio encoder is frozen: one encoding serves teacher and student
            emb = audio_embeddings(model, b["audio"], train=True)
        x = embed_inputs(model, b["ids"], b["slot"], emb)
        h = self.adapter.student(model, x, b["pos"], runtime_mask(b), b)  # (B, T, D)
        step = Step(self.protocol, model, b, h, emb, self.adapter.teacher)
        loss, stats = step.zero, {}
        for term in self.terms:
            value, s = term(step)
            stats.update(s)
            if value is not None:
                loss = loss + term.weight * value
        stats["loss"] = loss.detach()
        return loss, stats
