"""The only code that accepts tokens (docs/design.md §6).

The engine runs one forward over the root and every draft node and hands over
``logits`` ``(n + 1, V)``: row 0 = next-token logits at the root (the last committed
position), row ``i + 1`` = next-token logits after draft node ``i``. A verdict walks from
the root down the tree and always commits at least one token (the bonus/correction token
drawn at the last accepted node), so a forward never yields less than a plain step.

Greedy: at the current node the target is the argmax of its row; the child carrying the
target is accepted and the walk moves there, else the walk stops and commits the target.

Sampling (``p = softmax(logits / T)`` per row), lossless for any draft that is honest
about ``probs``:

* deterministic draft (``probs is None``): draw ``y ~ p`` at the current node; if a child
  carries ``y`` accept it and move on, else commit ``y`` and stop. Every committed token
  is a plain sample of the model, so this is exact whatever the draft proposed.
* draft with ``q`` (``probs[c]`` = the distribution child ``c``'s token was drawn from):
  recursive rejection sampling over the children in order (Leviathan et al. 2023 / Chen
  et al. 2023 for one child; Jeon et al. 2024, "Recursive Speculative Decoding", for
  siblings drawn without replacement). Child ``c`` with token ``x`` is tried with
  ``q~ = norm(q_c with the earlier-tried siblings' tokens zeroed)`` and accepted with
  probability ``min(1, p(x) / q~(x))``; on rejection ``p <- norm(max(0, p - q~))`` and the
  next child is tried. If none is accepted, a token drawn from the residual ``p`` is
  committed. Each rejection zeroes ``p`` at the rejected token, so the residual stays the
  right target for the next, distinct sibling; the committed token is distributed
  exactly as ``softmax(logits / T)`` of the row. A one-hot ``q`` reduces to the
  deterministic rule.

``max_tokens`` caps the committed tokens: the walk stops after ``max_tokens - 1``
accepted nodes and commits a fresh draw (argmax / sample of the untouched ``p``) there.

A rule above decoding (a unit's end, a transcription segment's delimiters) never edits a
verdict's tokens itself: it rules how many stand and which token ends them, and
``cut_verdict`` applies that.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ticktock.decoding.draft import Draft


@dataclass
class Verdict:
    accepted: list[int]  # draft node indices along the accepted path, root side first
    tokens: list[int]  # accepted tokens + the bonus/correction token (len == len(accepted) + 1)

    @property
    def num_accepted(self) -> int:
        return len(self.accepted)


def verify_draft(
    draft: Draft | None,
    logits: Tensor,  # (n + 1, V)
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
    max_tokens: int | None = None,
) -> Verdict:
    """Greedy when ``temperature <= 0``, else speculative sampling with ``generator``."""
    if temperature <= 0:
        return verify_greedy(draft, logits, max_tokens)
    assert generator is not None, "verify_draft: sampling needs a torch.Generator"
    return verify_sampling(draft, logits, temperature, generator, max_tokens)


def verify_greedy(draft: Draft | None, logits: Tensor, max_tokens: int | None = None) -> Verdict:
    """Accept while the draft matches the argmax; commit the argmax at the first mismatch."""
    _, cap = _check(draft, logits, max_tokens)
    return _walk(draft, logits.argmax(-1).tolist(), cap)


def verify_sampling(
    draft: Draft | None,
    logits: Tensor,  # (n + 1, V)
    temperature: float,
    generator: torch.Generator,
    max_tokens: int | None = None,
) -> Verdict:
    """Lossless speculative sampling on a tree (rule in the module docstring)."""
    if temperature <= 0:
        return verify_greedy(draft, logits, max_tokens)
    n, cap = _check(draft, logits, max_tokens)
    p = torch.softmax(logits.double() / temperature, dim=-1)  # (n + 1, V)
    dev = generator.device
    u_row = torch.rand(n + 1, 1, generator=generator, device=dev, dtype=torch.float64).to(p.device)
    samples = _sample(p, u_row)  # one draw from the untouched p of every row
    if draft is None or draft.probs is None:
        return _walk(draft, samples, cap)

    u_node = torch.rand(n, generator=generator, device=dev, dtype=torch.float64).tolist()
    tokens, rows, qs = draft.tokens, p.unbind(0), draft.probs.to(p).unbind(0)
    kids = draft.child_lists()
    accepted: list[int] = []
    node = -1
    while True:
        cur = rows[node + 1]  # (V,) the target at this node; the residual after rejections
        tried: list[int] = []
        nxt = None
        for c in kids.get(node, []) if len(accepted) < cap else []:
            x = tokens[c]
            qc = _without(qs[c], tried) if tried else qs[c]  # siblings: drawn without replacement
            a, b = cur[x].item(), qc[x].item()
            if not b > 0:
                raise ValueError(f"draft node {c}: probs give its token {x} probability {b}")
            if u_node[c] * b < a:  # accept with probability min(1, a / b)
                nxt = c
                break
            cur = residual(cur, qc)
            tried.append(x)
        if nxt is None:
            last = _sample(cur[None], u_row[node + 1, None])[0] if tried else samples[node + 1]
            return Verdict(accepted, [tokens[i] for i in accepted] + [last])
        accepted.append(nxt)
        node = nxt


def cut_verdict(verdict: Verdict, n: int, last: int) -> Verdict:
    """``verdict`` cut to its first ``n`` tokens, the n-th committed as ``last`` (its own token, or one a rule
    forces there): the first ``n - 1`` keep their accepted draft nodes, ``last`` is the new bonus token."""
    assert 1 <= n <= len(verdict.tokens), f"cut: n must be in [1, {len(verdict.tokens)}], got {n}"
    return Verdict(verdict.accepted[: n - 1], verdict.tokens[: n - 1] + [last])


def residual(p: Tensor, q: Tensor) -> Tensor:
    """``norm(max(0, p - q))`` (``(..., V)``): the target after rejecting a draw from ``q``.

    Where ``p == q`` a rejection has probability 0; should rounding produce one, ``p`` is
    kept.
    """
    r = (p - q).clamp_min(0)
    s = r.sum(-1, keepdim=True)
    return torch.where(s > 0, r / s.clamp_min(torch.finfo(r.dtype).tiny), p)


def _without(q: Tensor, tokens: list[int]) -> Tensor:
    """``q`` (V,) conditioned on not drawing any of ``tokens``."""
    q = q.clone()
    q[tokens] = 0
    return q / q.sum()


def _sample(p: Tensor, u: Tensor) -> list[int]:
    """Inverse-CDF draw per row of ``p`` ``(m, V)`` from uniforms ``u`` ``(m, 1)``."""
    cdf = p.cumsum(-1)  # (m, V)
    idx = torch.searchsorted(cdf, cdf[:, -1:] * u, right=True)  # (m, 1) first i with cdf[i] > v
    last = p.shape[-1] - 1  # reached only if u * total rounds up to total (odds ~2**-53)
    return [min(i, last) for i in idx.view(-1).tolist()]


def _walk(draft: Draft | None, targets: list[int], cap: int) -> Verdict:
    """Follow the children carrying ``targets[node + 1]`` for at most ``cap`` nodes."""
    index = draft.child_index() if draft is not None else {}
    accepted: list[int] = []
    node = -1
    while len(accepted) < cap and (child := index.get((node, targets[node + 1]))) is not None:
        accepted.append(child)
        node = child
    return Verdict(accepted, [draft.tokens[i] for i in accepted] + [targets[node + 1]])


def _check(draft: Draft | None, logits: Tensor, max_tokens: int | None) -> tuple[int, int]:
    """Returns ``(n, most nodes the walk may accept)``."""
    n = 0 if draft is None else len(draft)
    assert logits.dim() == 2 and logits.shape[0] == n + 1, (
        f"logits: expected shape (n + 1 = {n + 1}, V), got {tuple(logits.shape)}"
    )
    if max_tokens is None:
        return n, n
    assert max_tokens >= 1, f"max_tokens must be >= 1, got {max_tokens}"
    return n, min(n, max_tokens - 1)
