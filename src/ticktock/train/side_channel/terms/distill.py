"""`distill`: keep the base's behaviour at the native prediction positions (kd + dec + turn).

* ``kd``   — token-level KL(base ‖ adapted);
* ``dec``  — group-balanced KL between base and adapted mass on listen / speak / other at each unit's decision,
  averaged within the groups of the decision fed, then across (rare decisions count as much as common ones);
* ``turn`` — the same for the mass on `<|turn_eos|>` against the rest at the other native positions, grouped
  turn-end vs continuation by the token fed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..registry import TERMS, register
from .base import Step, Term


def group_balanced(values: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """Mean within each group present, then mean across groups. values, groups: (N,)."""
    means = [values[groups == g].mean() for g in groups.unique()]
    return torch.stack(means).mean() if means else values.new_zeros(())


def coarse_kl(p_t: torch.Tensor, logp_s: torch.Tensor, cols: list[int]) -> torch.Tensor:
    """KL between base and adapted mass on `cols` (one bucket each) + everything else. p_t, logp_s (N, V) -> (N,)."""
    def buckets(p: torch.Tensor) -> torch.Tensor:
        sel = p[:, cols]  # (N, k)
        return torch.cat([sel, (1 - sel.sum(-1, keepdim=True)).clamp_min(0)], -1).clamp_min(1e-8)
    bt, bs = buckets(p_t), buckets(logp_s.exp())
    return (bt * (bt.log() - bs.log())).sum(-1)


@register(TERMS, "distill")
@dataclass
class Distill(Term):
    def __call__(self, step: Step) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        n, p = step.native, step.protocol
        if n is None:
            kd = dec = turn = step.zero
        else:
            kd = (n.p_t * (n.logp_t - n.logp_s)).sum(-1).mean()
            decisions = [p.id("listen"), p.id("speak"), p.id("tool")]
            is_dec = torch.isin(n.fed, torch.tensor(decisions, device=n.fed.device))
            group = torch.where(n.fed == p.id("listen"), 0, torch.where(n.fed == p.id("speak"), 1, 2))
            dec = group_balanced(coarse_kl(n.p_t[is_dec], n.logp_s[is_dec], decisions[:2]), group[is_dec])
            turn_group = (n.fed[~is_dec] == p.id("turn_eos")).long()
            turn = group_balanced(coarse_kl(n.p_t[~is_dec], n.logp_s[~is_dec], [p.id("turn_eos")]), turn_group)
        return kd + dec + turn, {"kd": kd.detach(), "dec": dec.detach(), "turn": turn.detach()}
