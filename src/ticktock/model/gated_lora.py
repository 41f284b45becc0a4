"""LoRA that acts on side-channel tokens only (a *segment-gated* adapter, docs/side-channel.md).

A merged adapter changes every prediction the model makes, so the response drifts from the
base model's (other numbers, other cities) wherever the adapter learnt anything. Gated,
the low-rank update is added only at the inputs of a transcription segment
(`<|asr_start|>`, its words, `<|asr_end|>`); every other input runs the base weights. The
base model's own outputs then change only through what they read from the segments' KV.

The gate is per input token, set for the length of one decoder forward through the
decoder's `GateState` (the caller passes `gate=` to `Decoder.forward`).
"""

from __future__ import annotations

import torch
from torch import nn

from ..protocol import SlotKind

SEGMENT_KINDS = (int(SlotKind.ASR), int(SlotKind.ASR_MARK))  # the ledger kinds of a segment's tokens


class GateState:
    """The current forward's gate: (B, T) bool, True where the adapter acts; None = acts nowhere."""

    def __init__(self) -> None:
        self.value: torch.Tensor | None = None


def segment_gate(kinds: list[int]) -> torch.Tensor:
    """Ledger kinds (T,) -> gate (1, T) bool: True at a transcription segment's tokens."""
    return torch.tensor([k in SEGMENT_KINDS for k in kinds], dtype=torch.bool)[None]


class GatedLoRALinear(nn.Module):
    """`base(x) + gate * scale * x @ A^T @ B^T`; A (r, in), B (out, r)."""

    def __init__(self, base: nn.Linear, a: torch.Tensor, b: torch.Tensor, scale: float, state: GateState):
        super().__init__()
        self.base = base
        self.lora_a = nn.Parameter(a.to(base.weight), requires_grad=False)
        self.lora_b = nn.Parameter(b.to(base.weight), requires_grad=False)
        self.scale = scale
        self.state = state

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        gate = self.state.value
        if gate is None or not bool(gate.any()):
            return y
        delta = (x @ self.lora_a.t()) @ self.lora_b.t()
        return y + self.scale * delta * gate[..., None].to(delta.dtype)


def gate_layer(decoder: nn.Module, name: str, a: torch.Tensor, b: torch.Tensor, scale: float) -> None:
    """Replace the Linear `name` of `decoder` (a `Decoder`) by a `GatedLoRALinear` reading its gate state."""
    parent, _, attr = name.rpartition(".")
    base = decoder.get_submodule(name)
    setattr(decoder.get_submodule(parent), attr, GatedLoRALinear(base, a, b, scale, decoder.gate_state))


def has_gated_lora(module: nn.Module) -> bool:
    return any(isinstance(m, GatedLoRALinear) for m in module.modules())
