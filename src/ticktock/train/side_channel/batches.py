"""Batches of side-channel examples: padded student and teacher sequences, and the runtime's attention mask."""

from __future__ import annotations

import numpy as np
import torch

from ..examples import IGNORE
from .examples import SideChannelExample
from .kv_visibility import NEVER


def collate_side_channel(batch: list[SideChannelExample], pad_id: int, device) -> dict[str, torch.Tensor]:
    """Pad student and teacher sequences of a batch: (B, T) and (B, T') tensors, audio (B, N) float32."""
    def pad(arrays, fill, continue_positions=False):
        t = max(len(a) for a in arrays)
        out = torch.full((len(arrays), t), fill, dtype=torch.long)
        for i, a in enumerate(arrays):
            out[i, : len(a)] = torch.from_numpy(a)
            if continue_positions:  # padding continues the positions: it sits after every real token
                out[i, len(a):] = torch.arange(int(a[-1]) + 1, int(a[-1]) + 1 + t - len(a))
        return out

    n_audio = max(len(e.audio) for e in batch)
    audio = torch.zeros((len(batch), n_audio), dtype=torch.float16)
    for i, e in enumerate(batch):
        audio[i, : len(e.audio)] = torch.from_numpy(e.audio)
    out = {
        "ids": pad([e.ids for e in batch], pad_id), "labels": pad([e.labels for e in batch], IGNORE),
        "asr_labels": pad([e.asr_labels for e in batch], IGNORE), "open": pad([e.open_target for e in batch], -1),
        "pos": pad([e.positions for e in batch], 0, True), "slot": pad([e.audio_slot for e in batch], -1),
        "t_ids": pad([e.teacher_ids for e in batch], pad_id), "t_labels": pad([e.teacher_labels for e in batch], IGNORE),
        "t_pos": pad([e.teacher_positions for e in batch], 0, True), "t_slot": pad([e.teacher_slot for e in batch], -1),
        "audio": audio,
        "mem_labels": pad([e.memory_labels if e.memory_labels is not None else np.full(len(e.ids), IGNORE)
                           for e in batch], IGNORE),
        **{k: pad([getattr(e, k) if getattr(e, k) is not None else np.zeros(len(e.ids), dtype=bool)
                   for e in batch], 0) > 0 for k in ("pause", "recall")},
    }
    if any(e.kv_write is not None for e in batch):  # exact memory examples: the runtime's eviction mask
        out["kv_write"] = pad([e.kv_write if e.kv_write is not None else np.zeros(len(e.ids), dtype=np.int64)
                               for e in batch], 0)
        out["kv_gone"] = pad([e.kv_gone if e.kv_gone is not None else np.full(len(e.ids), NEVER) for e in batch], NEVER)
    out = {k: v.to(device, non_blocking=True) for k, v in out.items()}
    out["audio"] = out["audio"].float()
    return out


def runtime_mask(b: dict[str, torch.Tensor]) -> torch.Tensor | None:
    """(B, T, T) bool: causal, and each token of an exact memory example sees only what the runtime's cache held
    when it was written (`kv_visibility`); None (plain causal) when the batch holds none."""
    if "kv_write" not in b:
        return None
    t = b["kv_write"].shape[1]
    causal = torch.ones(t, t, dtype=torch.bool, device=b["kv_write"].device).tril()
    return causal & (b["kv_write"][:, :, None] < b["kv_gone"][:, None, :])
