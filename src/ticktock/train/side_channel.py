"""`ticktock train side-channel`: teach the base model to transcribe into its own context (docs/design.md §4).

From the base model: PEFT LoRA (rank 16, α 32) on the decoder's attention (q/k/v/o) and
MLP (gate/up/down) projections, plus the embedding rows of `<|asr_start|>`/`<|asr_end|>`
(tied with their output rows; every other row's gradient is masked). The audio encoder
and the base weights stay frozen. Loss per batch, unit weights as in the paper:

* ``ce``   — the side channel itself: the open decision at each designated point
  (binary, p(`<|asr_start|>`) against the rest), transcript tokens and `<|asr_end|>`;
* ``kd``   — token-level KL(base ‖ adapted) at native prediction positions. The base is
  the same model with adapters disabled (`disable_adapter()`), run on the native
  sequence (no segments), its distribution renormalised without the two ASR tokens;
  native predictions are paired by order, not index (segments shift the student);
* ``dec``  — group-balanced KL between base and adapted mass on listen / speak / other
  at each unit's decision, averaged within the groups of the decision fed, then across;
* ``turn`` — the same for the mass on `<|turn_eos|>` against the rest at the other
  native positions, grouped turn-end vs continuation by the token fed;
* ``pause`` — with ``--pause-weight W`` > 0: W × the listen / speak / other KL at the decisions
  of units inside a paused request (the user stopped mid-request: the base keeps listening), and
  with ``--hold-tags pause,backchannel`` also where a user's backchannel ends (the base keeps speaking).
  Among thousands of decisions these few weigh almost nothing in ``dec``, and they are where an
  adapter that reads its own transcripts takes over.

``--memory-distill T`` distils those retained units too, from the base on the last T units whole (no
history: `memory_data`'s local distillation), except a recall answer's units.

``--exact-kv`` lays the memory examples out whole under the runtime's eviction mask instead (`exact_memory`,
`kv_visibility`): the runtime never re-encodes, so the transcripts it reads back were computed beside their audio.
``--exact-distill`` then learns only their recall answers by cross-entropy and distils every other unit from the
base on the same units with all their audio (their pause units under the `pause` term too).

``--no-distill`` keeps ``ce`` only (the paper's ablation). Output: OUT/model (merged,
fp16, marked merged: `model.adapter.MERGED_FILE`), OUT/adapter (LoRA + the two rows), train_log.jsonl, loss.png, side_channel.json.

``--gate segment`` trains a *segment-gated* adapter (`model.gated_lora`): the LoRA update acts
only at a segment's tokens (the student's ``segment`` mask), so native positions run the base
weights and differ from the base only through what they read from the segments. It cannot be
merged: OUT/model is then the base with the two rows, and OUT/adapter carries `gate.json`.

``mem`` — with ``--memory-share`` > 0, that share of the examples are memory examples
(`memory_data`: the context as `a2t` eviction leaves it); their retained units' native
outputs are learnt by cross-entropy, since the base has no evicted cache to distil from.
``--init-adapter`` continues from a saved adapter instead of a fresh one.

``--full`` trains every decoder weight instead of a LoRA (the audio encoder stays frozen): the
teacher is then a frozen copy of the base, and OUT/model is the side-channel model whole (no
adapter/), shipped as merged weights beside the base. ``--init-adapter`` is merged in first. ``--init`` may
be such a model (marked merged), or one shipped as its decoder alone (`model.adapter.save_decoder_side_channel`,
over the base ``--teacher``): the run continues it — its two rows as trained — and the teacher is the plain
base ``--teacher`` (default the shipped one), not the model it continues.
"""

from __future__ import annotations

import copy
import json
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from ..model import DuplexLM, load_model, save_model
from ..model.adapter import (GATE_FILE, is_decoder_only, is_merged, load_whole_side_channel, mark_merged,
                             merge_side_channel)
from ..protocol import DuplexProtocol
from .examples import IGNORE
from .kv_visibility import NEVER
from .side_channel_data import SideChannelExample, SideChannelFactory
from .trainer import TrainConfig, audio_embeddings, embed_inputs, train

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class SideChannelConfig:
    placement: str = "after_decision"  # after_decision | after_content | both
    distill: bool = True
    rank: int = 16
    alpha: int = 32
    row_lr_scale: float = 10.0  # the two new rows start untrained: they move faster than the adapters
    memory_share: float = 0.0  # share of memory examples (an evicted cache, `memory_data`)
    family_weights: dict[str, float] | None = None  # over-sampled task families (None: all equally)
    long_share: float = 0.0  # share of memory examples from 5-10 minute sessions (`SideChannelFactory`)
    long_max_len: int = 2048  # their window, in tokens
    long_reuse: int = 16  # examples cut from each rendered long session (`SideChannelFactory`)
    gate: str = "all"  # all: the adapter acts on every token | segment: on a segment's tokens only
    delay_jitter: float = 0.0  # seconds: half the sessions use δ = 0.5 ± this, distillation only (`SideChannelFactory`)
    recall_share: float = 0.0  # memory examples that end at a recall answer (`SideChannelFactory`)
    pause_weight: float = 0.0  # weight of the KL at pause units' decisions (the `pause` term)
    full: bool = False  # train every decoder weight (teacher: a frozen copy of the base) instead of a LoRA
    hold_tags: tuple[str, ...] = ("pause",)  # script tags of the units the `pause` term weighs
    recall_weight: float = 0.0  # weight of the cross-entropy at recall answers of memory examples (`recall` term)
    distill_weight: float = 1.0  # weight of kd + dec + turn: holds the base's behaviour against heavy memory terms
    fact_swap: float = 0.0  # memory examples whose evicted facts are renamed (`SideChannelFactory`)
    history_shuffle: float = 0.0  # memory examples whose evicted exchanges are laid out anew (`SideChannelFactory`)
    exact_kv: bool = False  # memory examples laid out whole under the runtime's eviction mask (`exact_memory`)
    exact_distill: bool = False  # exact examples distil their non-recall units from the base (`exact_memory`)
    memory_distill: int = 0  # memory examples' retained units distilled from the base on this many last units (0: not)


# ------------------------------------------------------------------ parameters
def attach_lora(model: DuplexLM, rank: int = 16, alpha: int = 32):
    """Wrap the decoder with PEFT LoRA adapters (in place); returns the `PeftModel`."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=rank, lora_alpha=alpha, target_modules=list(LORA_TARGETS), lora_dropout=0.0, bias="none")
    return get_peft_model(model.lm, cfg)


def gate_lora(peft_model, state) -> None:
    """Make PEFT's LoRA layers act only where `state.value` (B, T) is True: each lora_B output is masked."""
    def hook(module, inputs, output):
        return output if state.value is None else output * state.value[..., None].to(output.dtype)

    for name, module in peft_model.named_modules():
        if name.endswith("lora_B.default"):
            module.register_forward_hook(hook)


def base_state(model: DuplexLM) -> dict[str, torch.Tensor]:
    """The model's state without the PEFT LoRA weights, under the plain layer names (what `save_model` writes)."""
    return {k.replace(".base_layer.", "."): v for k, v in model.state_dict().items() if "lora_" not in k}


def train_rows(model: DuplexLM, ids: list[int], seed: int = 0, only: bool = True) -> torch.nn.Parameter:
    """Make these embedding rows trainable (tied with the output rows); with `only`, every other row gets
    zero gradient (without it the whole embedding trains: `--full`).

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


def load_adapter_weights(peft_model, rows: torch.nn.Parameter, adapter: Path) -> None:
    """Start from a saved adapter (`train_side_channel`'s adapter/ folder): LoRA weights and the two rows."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    state = {k: v.float() for k, v in load_file(str(adapter / "adapter_model.safetensors")).items()}
    result = set_peft_model_state_dict(peft_model, state)
    missing = [k for k in getattr(result, "missing_keys", []) if "lora_" in k]
    if missing:
        raise ValueError(f"adapter {adapter} lacks {len(missing)} LoRA weights of this model, e.g. {missing[0]}")
    saved = load_file(str(adapter / "asr_rows.safetensors"))
    with torch.no_grad():
        rows[saved["ids"].to(rows.device)] = saved["weight"].to(rows.device, rows.dtype)


def param_groups(peft_model, rows: torch.nn.Parameter, row_lr_scale: float) -> Callable[[DuplexLM, TrainConfig], list[dict]]:
    """Optimizer groups: LoRA weights with weight decay; the rows without (decay would move frozen rows)."""
    def groups(model: DuplexLM, cfg: TrainConfig) -> list[dict]:
        lora = [p for n, p in peft_model.named_parameters() if p.requires_grad and "lora_" in n]
        return [{"params": lora, "weight_decay": cfg.weight_decay},
                {"params": [rows], "weight_decay": 0.0, "lr_scale": row_lr_scale}]
    return groups


def full_param_groups(model: DuplexLM, cfg: TrainConfig) -> list[dict]:
    """Optimizer groups of `--full`: the decoder's matrices with weight decay; the embedding (tied with the
    output head), norms and biases without."""
    decay, rest = [], []
    for n, p in model.lm.named_parameters():
        if p.requires_grad:
            (decay if p.ndim == 2 and "embed_tokens" not in n else rest).append(p)
    return [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": rest, "weight_decay": 0.0}]


# ------------------------------------------------------------------ batches
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
                   for e in batch], 0) > 0 for k in ("segment", "pause", "recall")},
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


# ------------------------------------------------------------------ loss
def group_balanced(values: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """Mean within each group present, then mean across groups. values, groups: (N,)."""
    means = [values[groups == g].mean() for g in groups.unique()]
    return torch.stack(means).mean() if means else values.new_zeros(())


def coarse_kl(p_t: torch.Tensor, logp_s: torch.Tensor, cols: list[int]) -> torch.Tensor:
    """KL between base and adapted mass on `cols` (one bucket each) + everything else. p_t, logp_s (N, V) -> (N,)."""
    def buckets(p: torch.Tensor) -> torch.Tensor:
        sel = p[:, cols]  # (N, k)
        return torch.cat([sel, (1 - sel.sum(-1, keepdim=True)).clamp_min(0)], -1).clamp_min(1e-8)
    bt, bs = buckets(p_t), buckets(logp_s.exp())
    return (bt * (bt.log() - bs.log())).sum(-1)


class SideChannelLoss:
    """Callable (model, batch) -> (loss, stats) for the trainer.

    The teacher is `base` (a frozen copy: `--full`) if given, else the model with `peft_model`'s adapters disabled.
    """

    def __init__(self, protocol: DuplexProtocol, peft_model, distill: bool = True, gated: bool = False,
                 pause_weight: float = 0.0, base: DuplexLM | None = None, recall_weight: float = 0.0,
                 distill_weight: float = 1.0):
        self.p, self.peft, self.distill, self.gated = protocol, peft_model, distill, gated
        self.pause_weight, self.base, self.recall_weight = pause_weight, base, recall_weight
        self.distill_weight = distill_weight
        self.asr = [protocol.id("asr_start"), protocol.id("asr_end")]

    def __call__(self, model: DuplexLM, b: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
        p = self.p
        with torch.no_grad():  # the audio encoder is frozen: one encoding serves teacher and student
            emb = audio_embeddings(model, b["audio"], train=True)
        h = model.lm(embed_inputs(model, b["ids"], b["slot"], emb), b["pos"], new_mask=runtime_mask(b),
                     gate=b["segment"] if self.gated else None)  # (B, T, D)
        stats: dict[str, torch.Tensor] = {}
        # the side channel: transcript tokens + <|asr_end|>, and the open decisions
        tmask = b["asr_labels"] != IGNORE
        omask = b["open"] >= 0
        t_logits = model.lm.logits(h[tmask])  # (N_t, V)
        ce_tok = F.cross_entropy(t_logits, b["asr_labels"][tmask], reduction="none")
        logp_open = model.lm.logits(h[omask]).log_softmax(-1)[:, p.id("asr_start")]  # (N_o,)
        y = b["open"][omask].float()
        ce_open = -(y * logp_open + (1 - y) * torch.log(-torch.expm1(logp_open.clamp(max=-1e-6))))
        events = torch.cat([ce_tok, ce_open])
        ce = events.mean() if events.numel() else h.sum() * 0.0  # a batch may hold no side-channel event
        stats["ce"] = ce.detach()
        with torch.no_grad():
            if tmask.any():
                stats["asr_acc"] = (t_logits.argmax(-1) == b["asr_labels"][tmask]).float().mean()
            if omask.any():
                stats["open_acc"] = ((logp_open.exp() > 0.5).float() == y).float().mean()
        loss = ce
        mmask = b["mem_labels"] != IGNORE
        if mmask.any():  # memory examples: the retained units' outputs over an evicted context
            m_logits, m_labels = model.lm.logits(h[mmask]), b["mem_labels"][mmask]
            mem_tok = F.cross_entropy(m_logits, m_labels, reduction="none")
            mem = mem_tok.mean()
            loss = loss + mem
            right = (m_logits.argmax(-1) == m_labels).float().detach()
            stats["mem"], stats["mem_acc"] = mem.detach(), right.mean()
            at_answer = b["recall"][mmask]  # a recall answer's few fact tokens weigh little in `mem`'s mean
            if self.recall_weight > 0 and at_answer.any():
                recall = mem_tok[at_answer].mean()
                loss = loss + self.recall_weight * recall
                stats["recall"], stats["recall_acc"] = recall.detach(), right[at_answer].mean()
        if self.distill:
            kd, dec, turn, pause = self._distill(model, b, h, emb)
            loss = loss + self.distill_weight * (kd + dec + turn) + self.pause_weight * pause
            stats.update(kd=kd.detach(), dec=dec.detach(), turn=turn.detach())
            if self.pause_weight > 0 and b["pause"].any():
                stats["pause"] = pause.detach()
        stats["loss"] = loss.detach()
        return loss, stats

    def _distill(self, model, b, h, emb) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        p = self.p
        nmask, tnmask = b["labels"] != IGNORE, b["t_labels"] != IGNORE
        zero = h.sum() * 0.0
        if not tnmask.any():  # a batch of memory examples only: nothing to distil
            return zero, zero, zero, zero
        with torch.no_grad(), self._teacher(model) as t:
            ht = t.lm(embed_inputs(t, b["t_ids"], b["t_slot"], emb), b["t_pos"])
            zt = t.lm.logits(ht[tnmask])  # (N, V)
            zt[:, self.asr] = float("-inf")  # the base never writes the new tokens
            p_t = zt.softmax(-1)
            logp_t = zt.log_softmax(-1).clamp_min(-1e4)
        logp_s = model.lm.logits(h[nmask]).log_softmax(-1)  # (N, V), paired with the teacher's by order
        assert logp_s.shape == p_t.shape, f"native events: student {tuple(logp_s.shape)} vs teacher {tuple(p_t.shape)}"
        fed = b["labels"][nmask]  # (N,) the native token that actually follows
        kd = (p_t * (logp_t - logp_s)).sum(-1).mean()
        decisions = [p.id("listen"), p.id("speak"), p.id("tool")]
        is_dec = torch.isin(fed, torch.tensor(decisions, device=fed.device))
        dec_group = torch.where(fed == p.id("listen"), 0, torch.where(fed == p.id("speak"), 1, 2))
        dec = group_balanced(coarse_kl(p_t[is_dec], logp_s[is_dec], decisions[:2]), dec_group[is_dec])
        turn_group = (fed[~is_dec] == p.id("turn_eos")).long()
        turn = group_balanced(coarse_kl(p_t[~is_dec], logp_s[~is_dec], [p.id("turn_eos")]), turn_group)
        at_pause = b["pause"][nmask]  # (N,) paired with the teacher's events by the same order
        pause = coarse_kl(p_t[at_pause], logp_s[at_pause], decisions[:2]).mean() if at_pause.any() else zero
        return kd, dec, turn, pause

    @contextmanager
    def _teacher(self, model: DuplexLM):
        if self.base is not None:
            yield self.base
        else:
            with self.peft.disable_adapter():
                yield model


# ------------------------------------------------------------------ the run
def plot_side_channel(log: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in log if "loss" in r]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
    for key in ("loss", "ce", "kd", "dec", "turn", "mem", "pause"):
        if any(key in r for r in rows):
            ax[0].plot([r["step"] for r in rows], [r.get(key, np.nan) for r in rows], label=key)
    ax[0].set(xlabel="step", ylabel="loss", yscale="log", title="side-channel training")
    ax[0].legend()
    for key in ("asr_acc", "open_acc", "mem_acc"):
        if any(key in r for r in rows):
            ax[1].plot([r["step"] for r in rows], [r.get(key, np.nan) for r in rows], label=key)
    ax[1].set(xlabel="step", ylabel="accuracy", title="transcript tokens / open decisions / memory outputs")
    ax[1].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def continues_full_run(init: Path | str | None, full: bool, init_adapter: Path | str | None,
                       teacher: Path | str | None) -> bool:
    """Does this run continue a `--full` run (`init` is a merged side-channel model)? Raises ValueError for what
    cannot go together: such an init without `full` or with an adapter, a teacher without such an init."""
    continued = init is not None and (is_merged(init) or is_decoder_only(init))
    if continued and (not full or init_adapter is not None):
        raise ValueError(f"{init} already is a side-channel model: continue it with --full and no --init-adapter "
                         "(a LoRA run continues with --init-adapter)")
    if teacher is not None and not continued:
        raise ValueError("--teacher is for continuing a --full run: give --full --init <that run>/model")
    return continued


def train_side_channel(out: Path, cfg: TrainConfig, sc: SideChannelConfig, init: Path | None = None,
                       device: str = "cuda", make_example: Callable[[int], SideChannelExample] | None = None,
                       model: DuplexLM | None = None, tokenizer=None, init_adapter: Path | None = None,
                       teacher: Path | None = None) -> list[dict]:
    """Adapt the base model (`init`, default the shipped one; or `model` + `tokenizer`) and save it to `out`;
    `init_adapter` continues from a saved adapter; a merged `init` (a `--full` run's model) is continued, with
    `teacher` (default the shipped base) as the frozen teacher."""
    from safetensors.torch import save_file

    t0 = time.time()
    continued = continues_full_run(init, sc.full, init_adapter, teacher)
    plain_base = None  # the teacher base when it is already in memory
    if model is None and init is not None and is_decoder_only(init):  # its base supplies the encoder and tokenizer
        model, tokenizer = load_model(teacher, "cpu", torch.float32)
        plain_base = copy.deepcopy(model)
        load_whole_side_channel(model, init)
    elif model is None:
        model, tokenizer = load_model(init, "cpu", torch.float32)
    proto = DuplexProtocol(tokenizer)
    if sc.gate not in ("all", "segment"):
        raise ValueError(f"unknown gate {sc.gate!r}; known: all, segment")
    gated = sc.gate == "segment"
    if sc.full and gated:
        raise ValueError("a segment gate needs a LoRA: --full trains the whole decoder")
    for prm in model.parameters():
        prm.requires_grad_(False)
    asr_ids = [proto.id("asr_start"), proto.id("asr_end")]
    base, peft_model = None, None
    if sc.full:
        if continued:  # its rows are trained already; the teacher is the plain base it came from
            base = plain_base if plain_base is not None else load_model(teacher, "cpu", torch.float32)[0]
            base = base.eval().requires_grad_(False)
        else:
            base = copy.deepcopy(model).eval()  # the frozen teacher, taken before any adapter is merged
            train_rows(model, asr_ids, cfg.seed, only=False)
            if init_adapter is not None:
                merge_side_channel(model, Path(init_adapter))
        for prm in model.lm.parameters():
            prm.requires_grad_(True)
        n_lora = 0
    else:
        peft_model = attach_lora(model, sc.rank, sc.alpha)
        rows = train_rows(model, asr_ids, cfg.seed)
        if init_adapter is not None:
            load_adapter_weights(peft_model, rows, Path(init_adapter))
        n_lora = sum(prm.numel() for n, prm in peft_model.named_parameters() if "lora_" in n)
    if gated:
        gate_lora(peft_model, model.lm.gate_state)
    print(json.dumps({"params": model.n_params(), "lora_params": n_lora, "placement": sc.placement, "gate": sc.gate,
                      "distill": sc.distill, "memory_share": sc.memory_share, "long_share": sc.long_share,
                      "recall_share": sc.recall_share, "pause_weight": sc.pause_weight, "hold_tags": sc.hold_tags,
                      "recall_weight": sc.recall_weight, "distill_weight": sc.distill_weight,
                      "fact_swap": sc.fact_swap,
                      "history_shuffle": sc.history_shuffle, "memory_distill": sc.memory_distill,
                      "exact_kv": sc.exact_kv, "exact_distill": sc.exact_distill,
                      "full": sc.full, "continued": continued,
                      "init_adapter": str(init_adapter) if init_adapter else None}), flush=True)
    make_example = make_example or SideChannelFactory(proto, sc.placement, cfg.max_len, sc.memory_share,
                                                      sc.family_weights, sc.long_share, sc.long_max_len, sc.long_reuse,
                                                      delay_jitter=sc.delay_jitter, recall_share=sc.recall_share,
                                                      hold_tags=sc.hold_tags, fact_swap=sc.fact_swap,
                                                      history_shuffle=sc.history_shuffle,
                                                      memory_distill=sc.memory_distill, exact_kv=sc.exact_kv,
                                                      exact_distill=sc.exact_distill)
    if base is not None:
        base.to(device)
    loss_fn = SideChannelLoss(proto, peft_model, sc.distill, gated, sc.pause_weight, base, sc.recall_weight,
                              sc.distill_weight)
    pad = proto.id("pad")

    def save(m: DuplexLM) -> None:
        if sc.full:  # the model is the side-channel model whole
            save_model(m, tokenizer, out / "model")
            mark_merged(out / "model", "full")
            return
        peft_model.save_pretrained(str(out / "adapter"))
        (out / "adapter" / "README.md").unlink(missing_ok=True)  # PEFT's generic model-card stub
        save_file({"weight": rows.detach()[asr_ids].float().cpu().contiguous(), "ids": torch.tensor(asr_ids)},
                  str(out / "adapter" / "asr_rows.safetensors"))
        if gated:  # nothing to fold in: the model is the base (with the two rows); the gate travels with the adapter
            (out / "adapter" / GATE_FILE).write_text(json.dumps({"gate": "segment"}))
            plain = DuplexLM(m.cfg)
            plain.load_state_dict(base_state(m))
            save_model(plain, tokenizer, out / "model")
            return
        peft_model.merge_and_unload()  # LoRA folded into the decoder's own Linear layers
        save_model(m, tokenizer, out / "model")
        mark_merged(out / "model", "lora")

    log = train(model, make_example, pad, cfg, out, device, on_checkpoint=save, loss_fn=loss_fn,
                collate_fn=lambda batch, dev: collate_side_channel(batch, pad, dev),
                param_groups=full_param_groups if sc.full else param_groups(peft_model, rows, sc.row_lr_scale))
    plot_side_channel(log, out / "loss.png")
    last = next((r for r in reversed(log) if "loss" in r), {})
    summary = {"config": asdict(cfg), "side_channel": asdict(sc), "lora_params": n_lora,
               "lora_targets": list(LORA_TARGETS), "steps": last.get("step"), "final": last,
               "seconds": round(time.time() - t0, 1)}
    (out / "side_channel.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary), flush=True)
    return log
