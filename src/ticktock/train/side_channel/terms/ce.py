"""`ce`: the side channel itself — the open decision at each designated point (binary, p(`<|asr_start|>`) against
the rest), the transcript tokens and `<|asr_end|>`, by cross-entropy on the student."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ...examples import IGNORE
from ..registry import TERMS, register
from .base import Step, Term


@register(TERMS, "ce")
@dataclass
class SideChannelCE(Term):
    def __call__(self, step: Step) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        b, lm = step.b, step.model.lm
        tmask, omask = b["asr_labels"] != IGNORE, b["open"] >= 0
        t_logits = lm.logits(step.h[tmask])  # (N_t, V)
        ce_tok = F.cross_entropy(t_logits, b["asr_labels"][tmask], reduction="none")
        logp_open = lm.logits(step.h[omask]).log_softmax(-1)[:, step.protocol.id("asr_start")]  # (N_o,)
        y = b["open"][omask].float()
        ce_open = -(y * logp_open + (1 - y) * torch.log(-torch.expm1(logp_open.clamp(max=-1e-6))))
        events = torch.cat([ce_tok, ce_open])
        ce = events.mean() if events.numel() else step.zero
        stats = {"ce": ce.detach()}
        with torch.no_grad():
            if tmask.any():
                stats["asr_acc"] = (t_logits.argmax(-1) == b["asr_labels"][tmask]).float().mean()
            if omask.any():
                stats["open_acc"] = ((logp_open.exp() > 0.5).float() == y).float().mean()
        return ce, stats
