"""A trainer's inputs for CPU tests of its loop: a cheap example and a loss on the test model's head."""

from __future__ import annotations

import numpy as np
import torch


def example(seed: int) -> np.ndarray:
    """(3,) float32, the same for seeds equal mod 7."""
    return np.full(3, seed % 7, dtype=np.float32)


def head_loss(model, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A loss that reaches the LM head's weights through the batch's "x" (B, 3)."""
    value = model.lm.lm_head.weight.pow(2).mean() * (1 + batch["x"].mean())
    return value, {"loss": value.detach()}


def stack_collate(batch: list[np.ndarray], device) -> dict[str, torch.Tensor]:
    """{"x": (B, 3)} on the device."""
    return {"x": torch.from_numpy(np.stack(batch)).to(device)}
