"""Interpolate two whole side channels of one base, weight by weight: (1 − t) · A + t · B.

Fine-tunes of one base usually lie in one basin, so a point between them can keep some of each: the shipped side
channel is the midpoint of a run that writes good transcripts and one that reads facts back from the runtime's cache
(docs/side-channel-training.md).
"""

from __future__ import annotations

from pathlib import Path

import torch

from ...model import load_model, save_model
from ...model.adapter import load_whole_side_channel, mark_merged


def interpolate(a: torch.nn.Module, b: torch.nn.Module, t: float) -> dict[str, torch.Tensor]:
    """(1 - t) * a + t * b for every floating-point tensor of two models of one architecture."""
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"t must lie in [0, 1], got {t}")
    sa, sb = a.state_dict(), b.state_dict()
    if sa.keys() != sb.keys():
        raise ValueError("the two models have different weights")
    return {k: torch.lerp(v.float(), sb[k].float(), t) if v.is_floating_point() else v for k, v in sa.items()}


def interpolate_side_channels(base: Path | None, a: Path, b: Path, t: float, out: Path) -> Path:
    """Write (1 − t) · A + t · B, the two whole side channels (a run's model/ or a decoder alone) over `base`
    (default the shipped one), to `out` as a whole side-channel model (marked merged); returns `out`."""
    model_a, tokenizer = load_model(base, "cpu", torch.float32)
    model_b, _ = load_model(base, "cpu", torch.float32)
    load_whole_side_channel(model_a, a)
    load_whole_side_channel(model_b, b)
    model_a.load_state_dict(interpolate(model_a, model_b, t))
    save_model(model_a, tokenizer, out)
    mark_merged(out, "full")
    return out
