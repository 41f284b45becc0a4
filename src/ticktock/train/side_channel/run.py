"""One side-channel training run: a recipe, the base it adapts, and what it continues (docs/side-channel-training.md).

Output in OUT: model/ (the side-channel model whole, fp16, marked merged: `model.adapter.MERGED_FILE`), adapter/
(a LoRA's weights and the two rows), train_log.jsonl, loss.png and side_channel.json (the recipe, final losses,
time) — written last, so a run folder holding it is complete.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...model import DEFAULT_MODEL, DuplexLM, load_model
from ...model.io import checkpoint_shards
from ...protocol import DuplexProtocol
from ..data import DATA_PRESETS
from ..trainer import train
from .batches import collate_side_channel
from .examples import SideChannelExample
from .loss import SideChannelLoss
from .mixture import Mixture
from .recipe import Recipe

DONE_FILE = "side_channel.json"


def plot_side_channel(log: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in log if "loss" in r]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
    for key in ("loss", "ce", "kd", "dec", "turn", "mem", "recall", "pause"):
        if any(key in r for r in rows):
            ax[0].plot([r["step"] for r in rows], [r.get(key, np.nan) for r in rows], label=key)
    ax[0].set(xlabel="step", ylabel="loss", yscale="log", title="side-channel training")
    ax[0].legend()
    for key in ("asr_acc", "open_acc", "mem_acc", "recall_acc"):
        if any(key in r for r in rows):
            ax[1].plot([r["step"] for r in rows], [r.get(key, np.nan) for r in rows], label=key)
    ax[1].set(xlabel="step", ylabel="accuracy", title="transcript tokens / open decisions / memory outputs")
    ax[1].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def base_fingerprint(base: Path | None) -> str:
    """The base's weights hashed (16 hex digits): a side channel fits one base, so a stage that continues another,
    and the merge, refuse a chain fitted to a different one."""
    h = hashlib.sha256()
    for shard in checkpoint_shards(Path(base) if base else DEFAULT_MODEL):
        with open(shard, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


def check_same_base(done: Path, fingerprint: str) -> None:
    """Refuse to build on a finished run (`done`: its folder) fitted to a base other than `fingerprint`'s."""
    fitted = json.loads((done / DONE_FILE).read_text()).get("base")
    if fitted and fitted != fingerprint:
        raise ValueError(f"{done} was fitted to another base (weights {fitted}; this base's are {fingerprint}): "
                         "pass the base it was fitted to (--base)")


def train_side_channel(out: Path, recipe: Recipe, base: Path | None = None, init: Path | None = None,
                       device: str = "cuda", time_budget_s: float = 1e9, workers: int = 0,
                       model: DuplexLM | None = None, tokenizer: Any = None,
                       make_example: Callable[[int], SideChannelExample] | None = None,
                       log_every: int = 50, fingerprint: str | None = None) -> list[dict]:
    """Adapt the base (`base`, default the shipped one; or `model` + `tokenizer`) by `recipe` and save to `out`.

    init: continue from a run's adapter/ folder, or (with a `full` adapter) from a whole side channel (a run's
    model/, or a decoder shipped alone); the teacher is always the plain base. fingerprint: the base's
    `base_fingerprint`, where the caller has it already (recorded in the run's summary; hashed here otherwise).
    """
    t0 = time.time()
    fitted_to_path = model is None
    if model is None:
        model, tokenizer = load_model(base, "cpu", torch.float32)
    proto = DuplexProtocol(tokenizer)
    model.requires_grad_(False)
    adapter = recipe.adapter
    adapter.prepare(model, [proto.id("asr_start"), proto.id("asr_end")], recipe.seed, Path(init) if init else None)
    print(json.dumps({"params": model.n_params(), "adapter_params": adapter.n_trainable(), "init": str(init or ""),
                      "recipe": recipe.to_dict()}), flush=True)
    make_example = make_example or Mixture(proto, recipe.sources, recipe.placement, recipe.family_weights,
                                           recipe.delay_jitter, recipe.hold_tags, DATA_PRESETS[recipe.data])
    pad = proto.id("pad")
    cfg = replace(recipe.train_config(time_budget_s, workers), log_every=log_every)
    log = train(model, make_example, pad, cfg, out, device, on_checkpoint=lambda m: adapter.save(m, tokenizer, out),
                loss_fn=SideChannelLoss(proto, adapter, recipe.terms),
                collate_fn=lambda batch, dev: collate_side_channel(batch, pad, dev),
                param_groups=adapter.param_groups)
    plot_side_channel(log, out / "loss.png")
    last = next((r for r in reversed(log) if "loss" in r), {})
    summary = {"recipe": recipe.to_dict(), "init": str(init or ""), "time_budget_s": time_budget_s,
               "base": (fingerprint or base_fingerprint(base)) if fitted_to_path else None,
               "adapter_params": adapter.n_trainable(), "steps": last.get("step"), "final": last,
               "seconds": round(time.time() - t0, 1)}
    (out / DONE_FILE).write_text(json.dumps(summary, indent=2))
    return log
