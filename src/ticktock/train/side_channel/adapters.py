"""What side-channel training trains: a LoRA on the base (`lora`) or the whole decoder (`full`).

Both make the embedding rows of `<|asr_start|>`/`<|asr_end|>` trainable (tied with their output rows); the audio
encoder stays frozen. An adapter also owns the teacher (the base, frozen) and how the result is saved. A new kind is
an `Adapter` dataclass registered under a name (`registry.ADAPTERS`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch

from ...model import DuplexLM, save_model
from ...model.adapter import is_decoder_only, is_merged, load_whole_side_channel, mark_merged, merge_side_channel
from ..trainer import TrainConfig
from .registry import ADAPTERS, register

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def is_side_channel_model(folder: Path | str) -> bool:
    """A whole side channel: a run's OUT/model (marked merged) or a decoder shipped alone."""
    return is_merged(folder) or is_decoder_only(folder)


def train_rows(model: DuplexLM, ids: list[int], seed: int = 0, only: bool = True) -> torch.nn.Parameter:
    """Make these embedding rows trainable (tied with the output rows); with `only`, every other row gets
    zero gradient (without it the whole embedding trains: `full`).

    The rows start at the mean embedding (plus a little noise to tell them apart): the base never used
    them, so as they are they sit where its training pushed unused outputs, far below every other logit.
    """
    weight = model.lm.model.embed_tokens.weight
    with torch.no_grad():
        noise = torch.randn(len(ids), weight.shape[1], generator=torch.Generator().manual_seed(seed))
        weight[ids] = weight.mean(0) + 0.1 * weight.std(0) * noise.to(weight)
    weight.requires_grad_(True)
    if not only:
        return weight
    keep = torch.zeros(weight.shape[0], 1, dtype=weight.dtype, device=weight.device)
    keep[ids] = 1.0
    weight.register_hook(lambda g: g * keep.to(g.device, g.dtype))
    return weight


@dataclass
class Adapter:
    """Its fields are the recipe's knobs; what `prepare` builds (PEFT model, teacher) are plain attributes, out of
    `dataclasses.asdict`."""

    name: ClassVar[str]

    def check_init(self, init: Path | None) -> None:
        """Refuse, in one line, what this adapter cannot continue: `init` must be a run's adapter/ folder or (a whole
        decoder only) a whole side channel."""
        if init is None:
            return
        whole = is_side_channel_model(init)
        if whole and self.name == "lora":
            raise ValueError(f"{init} already is a whole side-channel model: continue it with a `full` adapter "
                             "(a LoRA continues from an adapter/ folder)")
        if not whole and not (Path(init) / "adapter_config.json").is_file():
            raise ValueError(f"{init} is neither an adapter/ folder nor a side-channel model")

    def prepare(self, model: DuplexLM, asr_ids: list[int], seed: int, init: Path | None) -> None:
        """Make `model` (the base, frozen) trainable in place, continuing `init` if given (`check_init`)."""
        raise NotImplementedError

    def teacher(self, model: DuplexLM):
        """Context manager yielding the frozen base to distil from."""
        raise NotImplementedError

    def param_groups(self, model: DuplexLM, cfg: TrainConfig) -> list[dict]:
        raise NotImplementedError

    def save(self, model: DuplexLM, tokenizer: Any, out: Path) -> None:
        raise NotImplementedError

    def student(self, model: DuplexLM, x: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor | None,
                b: dict[str, torch.Tensor]) -> torch.Tensor:
        """The student's forward: x (B, T, D) -> hidden states (B, T, D)."""
        return model.lm(x, pos, new_mask=mask)

    def n_trainable(self) -> int:
        return 0


@register(ADAPTERS, "lora")
@dataclass
class LoRA(Adapter):
    """PEFT LoRA on the decoder's attention and MLP projections; the rows learn `row_lr_scale` times faster (they
    start untrained). Saves OUT/adapter (LoRA + `asr_rows.safetensors`) and OUT/model (merged, marked merged)."""

    rank: int = 16
    alpha: int = 32
    row_lr_scale: float = 10.0

    def prepare(self, model: DuplexLM, asr_ids: list[int], seed: int, init: Path | None) -> None:
        from peft import LoraConfig, get_peft_model

        self.check_init(init)
        cfg = LoraConfig(r=self.rank, lora_alpha=self.alpha, target_modules=list(LORA_TARGETS), lora_dropout=0.0,
                         bias="none")
        self.peft = get_peft_model(model.lm, cfg)
        self.ids, self.rows = asr_ids, train_rows(model, asr_ids, seed)
        if init is not None:
            self.load(Path(init))

    def load(self, adapter: Path) -> None:
        """Start from a saved adapter (a run's adapter/ folder): LoRA weights and the two rows."""
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        state = {k: v.float() for k, v in load_file(str(adapter / "adapter_model.safetensors")).items()}
        result = set_peft_model_state_dict(self.peft, state)
        missing = [k for k in getattr(result, "missing_keys", []) if "lora_" in k]
        if missing:
            raise ValueError(f"adapter {adapter} lacks {len(missing)} LoRA weights of this model, e.g. {missing[0]}")
        saved = load_file(str(adapter / "asr_rows.safetensors"))
        with torch.no_grad():
            self.rows[saved["ids"].to(self.rows.device)] = saved["weight"].to(self.rows.device, self.rows.dtype)

    @contextmanager
    def teacher(self, model: DuplexLM) -> Iterator[DuplexLM]:
        with self.peft.disable_adapter():
            yield model

    def param_groups(self, model: DuplexLM, cfg: TrainConfig) -> list[dict]:
        """LoRA weights with weight decay; the rows without (decay would move frozen rows)."""
        lora = [p for n, p in self.peft.named_parameters() if p.requires_grad and "lora_" in n]
        return [{"params": lora, "weight_decay": cfg.weight_decay},
                {"params": [self.rows], "weight_decay": 0.0, "lr_scale": self.row_lr_scale}]

    def save(self, model: DuplexLM, tokenizer: Any, out: Path) -> None:
        from safetensors.torch import save_file

        self.peft.save_pretrained(str(out / "adapter"))
        (out / "adapter" / "README.md").unlink(missing_ok=True)  # PEFT's generic model-card stub
        save_file({"weight": self.rows.detach()[self.ids].float().cpu().contiguous(), "ids": torch.tensor(self.ids)},
                  str(out / "adapter" / "asr_rows.safetensors"))
        self.peft.merge_and_unload()  # LoRA folded into the decoder's own Linear layers
        save_model(model, tokenizer, out / "model")
        mark_merged(out / "model", "lora")

    def n_trainable(self) -> int:
        return sum(p.numel() for n, p in self.peft.named_parameters() if "lora_" in n)


@register(ADAPTERS, "full")
@dataclass
class Full(Adapter):
    """Every decoder weight trains; the teacher is a frozen copy of the base. `init` may be an adapter/ folder
    (merged in first) or a whole side channel (continued as it is, its two rows as trained). Saves OUT/model, the
    side-channel model whole (marked merged)."""

    def prepare(self, model: DuplexLM, asr_ids: list[int], seed: int, init: Path | None) -> None:
        self.check_init(init)
        self.base = copy.deepcopy(model).eval().requires_grad_(False)  # before anything is merged in
        if init is not None and is_side_channel_model(init):
            load_whole_side_channel(model, init)
        else:
            train_rows(model, asr_ids, seed, only=False)
            if init is not None:
                merge_side_channel(model, Path(init))
        model.lm.requires_grad_(True)

    @contextmanager
    def teacher(self, model: DuplexLM) -> Iterator[DuplexLM]:
        self.base.to(next(model.parameters()).device)
        yield self.base

    def param_groups(self, model: DuplexLM, cfg: TrainConfig) -> list[dict]:
        """The decoder's matrices with weight decay; the embedding (tied with the head), norms and biases without."""
        decay, rest = [], []
        for n, p in model.lm.named_parameters():
            if p.requires_grad:
                (decay if p.ndim == 2 and "embed_tokens" not in n else rest).append(p)
        return [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": rest, "weight_decay": 0.0}]

    def save(self, model: DuplexLM, tokenizer: Any, out: Path) -> None:
        save_model(model, tokenizer, out / "model")
        mark_merged(out / "model", "full")
