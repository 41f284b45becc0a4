"""The training loop: examples from worker processes, batched audio features on the device, CE on outputs.

Workers render fresh sessions continuously (a fixed set is memorised within
minutes, docs/design.md §5a; `intake`), at most a buffer's worth ahead of what the steps drew; the trainer samples
batches from a replay buffer of the newest examples so the GPU never waits on rendering. The log says how many examples
the workers made (`made`) and how often each was drawn on average (`draws_per_example`):
far above 1, examples can be learnt by heart (experiments/LOG.md, recall runs W, X, Y).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F

from ..model.duplex import DuplexLM
from .examples import IGNORE, Example
from .features import augment_waveform, batch_log_mel, freq_warp, spec_augment
from .intake import ExampleIntake
from .tower_audio import tower_embeddings
from .word_frames import WordFrameHead


@dataclass
class TrainConfig:
    steps: int = 6000
    batch: int = 64
    lr: float = 1.5e-3
    warmup: int = 300
    weight_decay: float = 0.05
    max_len: int = 512
    time_budget_s: float = 1e9  # stop early (and still save) when the wall time runs out
    buffer: int = 40000
    workers: int = 0  # 0 = all cores but one
    seed: int = 0
    log_every: int = 50
    prefetch: bool = False  # draw and collate the next batch in a thread while the device runs this step


def collate(batch: list[Example], pad_id: int, chunk: int, device) -> dict[str, torch.Tensor]:
    t = max(len(e.ids) for e in batch)
    u = max(e.n_units for e in batch)
    n_audio = (u + 1) * chunk + 240
    ids = torch.full((len(batch), t), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), t), IGNORE, dtype=torch.long)
    pos = torch.zeros((len(batch), t), dtype=torch.long)
    slot = torch.full((len(batch), t), -1, dtype=torch.long)
    audio = torch.zeros((len(batch), n_audio), dtype=torch.float16)  # half the bytes to move; float32 on device
    for i, e in enumerate(batch):
        n = len(e.ids)
        ids[i, :n] = torch.from_numpy(e.ids)
        labels[i, :n] = torch.from_numpy(e.labels)
        pos[i, :n] = torch.from_numpy(e.positions)
        pos[i, n:] = torch.arange(int(e.positions[-1]) + 1, int(e.positions[-1]) + 1 + t - n)
        slot[i, :n] = torch.from_numpy(e.audio_slot)
        audio[i, : len(e.audio)] = torch.from_numpy(e.audio)
    out = {"ids": ids, "labels": labels, "pos": pos, "slot": slot, "audio": audio}
    if batch[0].frame_words is not None:
        per_unit = len(batch[0].frame_words) // batch[0].n_units
        frames = torch.full((len(batch), u * per_unit), IGNORE, dtype=torch.long)
        for i, e in enumerate(batch):
            frames[i, : len(e.frame_words)] = torch.from_numpy(e.frame_words)
        out["frame_words"] = frames
    if batch[0].mel_floor is not None:  # a tower's log-mel floors (`tower_audio`); padded units: silence's
        floor = torch.full((len(batch), u + 1), -10.0, dtype=torch.float64)
        for i, e in enumerate(batch):
            floor[i, : len(e.mel_floor)] = torch.from_numpy(e.mel_floor)
        out["floor"] = floor
        out["unit0"] = torch.tensor([e.first_unit for e in batch], dtype=torch.long)
    pin = torch.device(device).type == "cuda"
    out = {k: (v.pin_memory() if pin else v).to(device, non_blocking=True) for k, v in out.items()}
    out["audio"] = out["audio"].float()
    return out


def audio_embeddings(model: DuplexLM, audio: torch.Tensor, train: bool, gen=None, return_inner: bool = False):
    """audio (B, N) -> log-mel -> per-unit encoder with one chunk of context -> (B, U*E, D).

    With `return_inner` also the encoder's inner frames of every unit, (B, U*inner_per_chunk, width).
    """
    acfg = model.cfg.audio
    f, e = acfg.frames_per_chunk, acfg.embeds_per_chunk
    wav = augment_waveform(audio, gen) if train else audio
    mel = batch_log_mel(wav)  # (B, (U+1)F, 80)
    if train:
        mel = spec_augment(freq_warp(mel, gen), gen)
    bsz, frames, nm = mel.shape
    u = frames // f - 1
    chunks = mel[:, : (u + 1) * f].reshape(bsz, u + 1, f, nm)
    cur = chunks[:, 1:].reshape(bsz * u, f, nm)
    ctx = chunks[:, :-1].reshape(bsz * u, f, nm)
    emb = model.audio(cur.to(model.dtype), ctx.to(model.dtype), return_inner=return_inner)
    if not return_inner:
        return emb.reshape(bsz, u * e, -1)
    emb, inner = emb
    return emb.reshape(bsz, u * e, -1), inner.reshape(bsz, -1, inner.shape[-1])


def embed_inputs(model: DuplexLM, ids: torch.Tensor, slot: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
    """Token embeddings (B, T, D) with audio slots (slot >= 0) taken from `emb` (B, U*E, D)."""
    x = model.lm.embed(ids)
    gathered = torch.gather(emb, 1, slot.clamp(min=0)[..., None].expand(-1, -1, emb.shape[-1]))
    return torch.where((slot >= 0)[..., None], gathered.to(x.dtype), x)


def model_loss(model: DuplexLM, b: dict[str, torch.Tensor], train: bool, gen=None,
               word_head: WordFrameHead | None = None, word_weight: float = 0.5) -> tuple[torch.Tensor, dict]:
    """CE over output tokens, plus `word_weight` x the frame-level word CE when a `word_head` is given.
    A model with a published model's audio tower hears as its stream does (`tower_audio`)."""
    frames = word_head is not None and "frame_words" in b
    if model.cfg.tower is not None:
        emb = tower_embeddings(model, b, train, gen)
    else:
        emb = audio_embeddings(model, b["audio"], train, gen, return_inner=frames)
    if frames:
        emb, inner = emb
    h = model.lm(embed_inputs(model, b["ids"], b["slot"], emb), b["pos"])
    mask = b["labels"] != IGNORE
    logits = model.lm.logits(h[mask])
    loss = F.cross_entropy(logits, b["labels"][mask])
    with torch.no_grad():
        acc = (logits.argmax(-1) == b["labels"][mask]).float().mean()
    stats = {"loss": loss.detach(), "acc": acc}  # tensors: read them only when logging (a host sync)
    if frames:
        wloss, wstats = word_head.loss(inner.reshape(-1, inner.shape[-1]), b["frame_words"].reshape(-1))
        stats.update(word_loss=wloss.detach(), **wstats)
        loss = loss + word_weight * wloss
    return loss, stats


def recent_index(rng: random.Random, n: int, mean_age: float = 4000.0) -> int:
    """An index into a buffer of `n` examples, oldest first: recent ones are preferred (fresh renderings fight
    memorisation), ages drawn from an exponential with mean `mean_age`. An age past the buffer's start falls
    anywhere in it; clipping it to the oldest example instead would fill the early, small buffer's batches with
    copies of that one example."""
    age = int(rng.expovariate(1 / mean_age))
    return n - 1 - (age if age < n else rng.randrange(n))


@torch.enable_grad()  # whatever the caller's grad mode (a command or test may have turned it off)
def train(model: DuplexLM, make_example: Callable[[int], Example], pad_id: int, cfg: TrainConfig,
          out_dir: Path, device: str = "cuda", on_checkpoint: Callable[[DuplexLM], None] | None = None,
          eval_fn: Callable[[DuplexLM], dict] | None = None,
          loss_fn: Callable[[DuplexLM, dict], tuple[torch.Tensor, dict]] | None = None,
          collate_fn: Callable[[list, str], dict] | None = None,
          param_groups: Callable[[DuplexLM, TrainConfig], list[dict]] | None = None,
          chunk: int | None = None) -> list[dict]:
    """Train `model` in place; logs JSON lines to out_dir/train_log.jsonl and returns them.

    chunk: samples per unit (default: the model's own audio encoder's chunk).

    Defaults train the base task; `loss_fn(model, batch)`, `collate_fn(examples, device)` and
    `param_groups(model, cfg)` (optimizer groups of the trainable parameters) swap in another objective.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    threads = torch.get_num_threads()
    if torch.device(device).type != "cpu":
        # the rendering workers own the cores; a wide intra-op pool in this process only contends with them
        torch.set_num_threads(min(threads, 2))
    torch.manual_seed(cfg.seed)
    model.to(device).train()
    chunk = chunk or model.cfg.audio.frames_per_chunk * 160
    n_workers = cfg.workers or max(1, (mp.cpu_count() or 2) - 1)
    if param_groups is not None:
        groups = param_groups(model, cfg)
    else:
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95), fused=(device == "cuda"))
    rng = random.Random(cfg.seed)
    log: list[dict] = []
    logf = (out_dir / "train_log.jsonl").open("w")
    (out_dir / "train_config.json").write_text(json.dumps(asdict(cfg), indent=2))
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device == "cuda" else torch.autocast("cpu", enabled=False)
    step = 0
    waited = 0.0  # seconds the trainer waited for examples (rendering-bound if large)
    intake = ExampleIntake(make_example, n_workers, cfg.seed, cfg.buffer, ahead=cfg.buffer).start()
    buf = intake.buffer

    def next_batch() -> tuple[float, dict[str, torch.Tensor]]:
        """(seconds waited for examples, the collated batch on the device)."""
        wait = intake.wait_for(cfg.batch)
        batch = [buf[recent_index(rng, len(buf))] for _ in range(cfg.batch)]
        intake.took(cfg.batch)
        return wait, collate_fn(batch, device) if collate_fn else collate(batch, pad_id, chunk, device)

    def write_record(lr: float, stats: dict[str, torch.Tensor]) -> None:
        rec = {"step": step, "lr": lr, "buffer": len(buf), "seconds": round(time.time() - t_start, 1),
               "waited": round(waited, 1), "made": intake.made,
               "draws_per_example": round(step * cfg.batch / max(intake.made, 1), 2),
               **{k: round(float(v), 4) for k, v in stats.items()}}
        log.append(rec)
        logf.write(json.dumps(rec) + "\n")
        logf.flush()
        print(json.dumps(rec), flush=True)

    # one batch ahead: its padding and host-to-device copy overlap the step before it (the same draws, in order)
    pool = ThreadPoolExecutor(1) if cfg.prefetch else None
    ahead = pool.submit(next_batch) if pool else None
    try:
        while step < cfg.steps and time.time() - t_start < cfg.time_budget_s:
            wait, b = ahead.result() if ahead else next_batch()
            ahead = pool.submit(next_batch) if pool else None
            waited += wait
            # cosine over whichever runs out first: steps or the wall-clock budget
            frac = min(1.0, max(step / cfg.steps, (time.time() - t_start) / cfg.time_budget_s))
            lr = cfg.lr * min(1.0, (step + 1) / cfg.warmup) * 0.5 * (1 + math.cos(math.pi * frac))
            for g in opt.param_groups:
                g["lr"] = lr * g.get("lr_scale", 1.0)
            with amp:
                loss, stats = loss_fn(model, b) if loss_fn else model_loss(model, b, train=True)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
            opt.step()
            step += 1
            if step % cfg.log_every == 0 or step == 1:
                write_record(lr, stats)
        if log and log[-1]["step"] != step:  # the last step's record too, when the budget ended between log steps
            write_record(lr, stats)
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
        intake.stop()
        torch.set_num_threads(threads)
    model.eval()
    if on_checkpoint:
        on_checkpoint(model)
    if eval_fn:
        rec = {"step": step, "seconds": round(time.time() - t_start, 1), "eval": eval_fn(model)}
        log.append(rec)
        logf.write(json.dumps(rec) + "\n")
    logf.close()
    return log
