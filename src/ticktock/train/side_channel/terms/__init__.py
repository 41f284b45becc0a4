"""Loss terms of side-channel training, one dataclass each; the loss is Σ weight × term (`loss.SideChannelLoss`).

A term reads one training step (`Step`): the batch, the student's hidden states, and — computed once, when a term
asks — the teacher's distribution at the native prediction positions and the memory targets' cross-entropy. A new
term is a `Term` dataclass registered under a name (`registry.TERMS`).
"""

from .base import Native, Memory, Step, Term
from . import ce, distill, memory, pause  # noqa: F401  (each registers itself)

__all__ = ["Native", "Memory", "Step", "Term"]
