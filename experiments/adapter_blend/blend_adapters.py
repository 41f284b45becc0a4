"""Blend two side-channel adapters of one base: the merged model of the blend is w·merged(A) + (1-w)·merged(B).

ΔW = w·s_A·B_A·A_A + (1-w)·s_B·B_B·A_B is exactly one LoRA of rank r_A + r_B (A stacked, B side by side, the
weights and scales folded into B); the two new token rows are blended the same way. An experiment of
experiments/LOG.md (weight averaging of two runs from one lineage), not a training recipe of the shipped adapter.
Usage: python experiments/adapter_blend/blend_adapters.py ADAPTER_A ADAPTER_B W OUT
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


def blend(first: Path, second: Path, w: float, out: Path) -> None:
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"the weight must be within [0, 1], got {w}")
    cfgs = [json.loads((d / "adapter_config.json").read_text()) for d in (first, second)]
    states = [load_file(str(d / "adapter_model.safetensors")) for d in (first, second)]
    if set(states[0]) != set(states[1]):
        raise ValueError("the adapters adapt different layers")
    scales = [c["lora_alpha"] / c["r"] for c in cfgs]
    r = cfgs[0]["r"] + cfgs[1]["r"]
    state = {}
    for key in (k for k in states[0] if k.endswith("lora_A.weight")):
        kb = key.replace("lora_A", "lora_B")
        state[key] = torch.cat([states[0][key].float(), states[1][key].float()], 0)  # (r, in)
        state[kb] = torch.cat([states[0][kb].float() * w,  # the blend keeps the first adapter's scale
                               states[1][kb].float() * ((1 - w) * scales[1] / scales[0])], 1)  # (out, r)
    rows = [load_file(str(d / "asr_rows.safetensors")) for d in (first, second)]
    if not torch.equal(rows[0]["ids"], rows[1]["ids"]):
        raise ValueError("the adapters' token rows are for different ids")
    out.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out / "adapter_model.safetensors"))
    save_file({"weight": w * rows[0]["weight"] + (1 - w) * rows[1]["weight"], "ids": rows[0]["ids"]},
              str(out / "asr_rows.safetensors"))
    cfg = {**cfgs[0], "r": r, "lora_alpha": scales[0] * r}  # keeps the first adapter's alpha / r
    (out / "adapter_config.json").write_text(json.dumps(cfg, indent=2))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    blend(Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]), Path(sys.argv[4]))
