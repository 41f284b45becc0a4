"""A side-channel stage's model, to evaluate a chain part-way (the stages keep only their adapter/ on the way back).

    python experiments/probes/stage_model.py RUNS/STAGE OUT [--base MODEL_DIR]

A LoRA stage's adapter/ is merged into the base (default: the shipped ticktock-tiny); a whole stage's model/ is
copied as it is. OUT is then a side-channel model for `ticktock eval --model OUT --side-channel after_content`.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import torch

from ticktock.model import load_model, save_model
from ticktock.model.adapter import mark_merged, merge_side_channel


def stage_model(stage: Path, out: Path, base: Path | None) -> Path:
    if (stage / "model").is_dir():
        shutil.copytree(stage / "model", out, dirs_exist_ok=True)
        return out
    if not (stage / "adapter" / "adapter_config.json").is_file():
        raise SystemExit(f"{stage}: neither adapter/ nor model/")
    model, tokenizer = load_model(base, "cpu", torch.float32)
    save_model(merge_side_channel(model, stage / "adapter"), tokenizer, out)
    mark_merged(out, "lora")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--base", type=Path, default=None)
    a = ap.parse_args()
    print(stage_model(a.stage, a.out, a.base))
