"""Calibration: time a forward vs (new tokens, context length) once per model/device (docs/design.md §7).

    model, name = build_model(shape="qwen2.5-7b", device="cuda", dtype=torch.bfloat16)
    profile = calibrate(model, Grid(contexts=[256, 2048], new_tokens=[1, 32]), name=name)
    write_profile(profile, "benchmarks/profiles/h200-qwen2.5-7b-bf16.json")

The profile feeds `session.clock.CostModelClock`: `ms[c][n]` is the median wall time
(host work included, device synchronised before and after, warm-up excluded) of one
forward of `new_tokens[n]` tokens with `context[c]` resident KV slots before it. The
cache is filled by reserving slots over random K/V (no prefill: attention cost does not
depend on the values). `tree_ms` holds the same forward shaped as a draft tree (one root,
n - 1 nodes): it should cost the same as the chain.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from .. import __version__
from ..decoding.draft import Draft
from ..engine import Engine, Segment
from ..engine.fast import FastEngine, query_bucket
from ..model import DuplexLM, ModelConfig, preset
from ..protocol import SlotKind

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
DEFAULT_CONTEXTS = [256, 1024, 2048, 4096]
DEFAULT_NEW_TOKENS = [1, 2, 4, 8, 16, 32, 64, 128]


@dataclass
class Grid:
    """What to measure: every (context, new tokens) pair, `repeats` timed runs after `warmup` untimed ones."""

    contexts: list[int] = field(default_factory=lambda: list(DEFAULT_CONTEXTS))
    new_tokens: list[int] = field(default_factory=lambda: list(DEFAULT_NEW_TOKENS))
    repeats: int = 5
    warmup: int = 2
    tree: bool = True  # also time each n > 1 as a draft tree

    def points(self) -> int:
        return len(self.contexts) * len(self.new_tokens)


def dtype_name(dtype: torch.dtype) -> str:
    return {v: k for k, v in DTYPES.items()}[dtype]


# ---------------------------------------------------------------- models
def random_model(cfg: ModelConfig, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32,
                 seed: int = 0, std: float = 0.02, direct: bool | None = None) -> DuplexLM:
    """A random-weights model built directly on `device` in `dtype`.

    direct (default: for shapes of 200 M parameters or more, e.g. a 7B decoder): build on the
    meta device and materialise parameter by parameter on `device`, so no fp32 copy ever
    exists on the CPU: matrices ~ N(0, std), norm weights 1, biases 0. Otherwise the
    modules' own initialisation, then a cast.
    """
    device = torch.device(device)
    with torch.device("meta"):
        model = DuplexLM(cfg)
    if direct is None:
        direct = sum(p.numel() for p in model.parameters()) >= 200_000_000
    if not direct:
        torch.manual_seed(seed)
        return DuplexLM(cfg).to(device=device, dtype=dtype).eval()
    gen = torch.Generator(device=device).manual_seed(seed)
    made: dict[int, nn.Parameter] = {}
    for mod in model.modules():
        for name, p in list(mod._parameters.items()):
            if p is None:
                continue
            if id(p) not in made:  # tied weights stay tied
                t = torch.empty(p.shape, device=device, dtype=dtype)
                if p.dim() >= 2:
                    t.normal_(0.0, std, generator=gen)
                else:
                    t.fill_(1.0 if name == "weight" else 0.0)
                made[id(p)] = nn.Parameter(t, requires_grad=False)
            mod._parameters[name] = made[id(p)]
        for name, b in list(mod._buffers.items()):
            if b is not None:
                mod._buffers[name] = torch.zeros_like(b, device=device)
    return model.eval()


def build_model(shape: str | None = None, path: str | Path | None = None, device: str = "cpu",
                dtype: torch.dtype = torch.float32, seed: int = 0) -> tuple[DuplexLM, str]:
    """A preset shape with random weights, or a model directory (default: the shipped model). Returns (model, name)."""
    if shape is not None and path is not None:
        raise ValueError("give a model path or a shape, not both")
    if shape is not None:
        return random_model(preset(shape), device, dtype, seed), f"{shape} (random weights)"
    from ..runtime import load_runtime
    rt = load_runtime(path, device, dtype)
    return rt.model.eval(), rt.name


def make_engine(model: DuplexLM, max_slots: int, fast: bool) -> Engine:
    """`FastEngine` (CUDA graphs on CUDA, eager elsewhere) or the plain eager `Engine`."""
    return FastEngine(model, max_slots) if fast else Engine(model, max_slots)


# ---------------------------------------------------------------- timing
def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_ms(fn: Callable[[], object], device: torch.device, warmup: int = 2, repeats: int = 5) -> list[float]:
    """Wall milliseconds of `fn()` per run, device synchronised around each; warm-up runs excluded."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def binary_tree(n: int) -> list[int]:
    """Parents of an n-node draft tree, two children per node (node 0 hangs off the root)."""
    return [(i - 1) // 2 for i in range(n)]


def fill_cache(engine: Engine, context: int) -> None:
    """Reset the engine and claim `context` slots (whatever K/V they hold) as resident."""
    engine.reset()
    if context:
        engine.cache.reserve(torch.arange(context), 0, [int(SlotKind.TEXT)] * context)


def forward_calls(engine: Engine, context: int, n: int, gen: torch.Generator) -> tuple[Callable, Callable | None]:
    """Two callables at `context` resident slots: an n-token chain forward and the same n tokens as a
    draft tree (None for n = 1); each rolls the cache back to `context` afterwards."""
    cache = engine.cache
    ids = torch.randperm(engine.model.cfg.decoder.vocab_size, generator=gen)[:n]  # distinct: a draft's siblings differ
    text = int(SlotKind.TEXT)
    draft = Draft(ids[1:].tolist(), binary_tree(n - 1))

    def chain():
        engine.forward([Segment(ids, [text] * n)], unit=1)
        cache.truncate(context)

    def tree():
        engine.forward([Segment(ids[:1], [text])], unit=1, draft=draft, draft_kinds=[text] * (n - 1))
        cache.truncate(context)

    return chain, (tree if n > 1 else None)


def time_encoder(model: DuplexLM, grid: Grid) -> float:
    """Median ms to turn one 1 s audio chunk into embeddings (log-mel + encoder), 0.0 without an encoder."""
    if model.audio is None:
        return 0.0
    import numpy as np

    from ..audio import SAMPLE_RATE, audio_front_end  # imported here: the audio stack is not needed otherwise
    front = audio_front_end(model, SAMPLE_RATE)
    chunk = (np.random.default_rng(0).standard_normal(SAMPLE_RATE) * 0.1).astype(np.float32)
    return statistics.median(time_ms(lambda: front.push(chunk), model.device, grid.warmup, grid.repeats))


# ---------------------------------------------------------------- the profile
@torch.no_grad()
def calibrate(model: DuplexLM, grid: Grid, *, name: str = "model", shape: str | None = None,
              fast: bool | None = None, seed: int = 0, progress: Callable[[], None] | None = None) -> dict:
    """Measure the grid and return the profile dict (see the module docstring and docs/calibrate.md).

    fast: use `FastEngine` (None = on CUDA only; on a CPU it falls back to the eager path anyway).
    progress: called after each timed (context, new tokens) point, `grid.repeats * grid.points()` times.
    """
    device = model.device
    fast = device.type == "cuda" if fast is None else fast
    max_new = max(query_bucket(n) or n for n in grid.new_tokens)
    engine = make_engine(model, max(grid.contexts) + max_new, fast)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    engine.cache.k.normal_()
    engine.cache.v.normal_()
    calls = {}  # (c, n) -> (chain, tree)
    for c in grid.contexts:  # untimed: first-call costs (kernel selection, graph capture) stay out
        fill_cache(engine, c)
        for n in grid.new_tokens:
            calls[c, n] = chain, tree = forward_calls(engine, c, n, gen)
            for _ in range(max(1, grid.warmup)):
                chain()
                if tree and grid.tree:
                    tree()
    # Timed passes over the whole grid, each point once per pass: a burst of load on a shared
    # machine then spreads over every point instead of spoiling a few; the median is per point.
    runs = {key: ([], []) for key in calls}
    for _ in range(grid.repeats):
        for c in grid.contexts:
            fill_cache(engine, c)
            for n in grid.new_tokens:
                chain, tree = calls[c, n]
                runs[c, n][0].append(time_ms(chain, device, 0, 1)[0])
                if tree and grid.tree:
                    runs[c, n][1].append(time_ms(tree, device, 0, 1)[0])
                if progress:
                    progress()
    med = lambda xs: round(statistics.median(xs), 4)  # noqa: E731
    ms = [[med(runs[c, n][0]) for n in grid.new_tokens] for c in grid.contexts]
    tree_ms = [[med(runs[c, n][1] or runs[c, n][0]) for n in grid.new_tokens] for c in grid.contexts]
    fast_used = isinstance(engine, FastEngine) and engine.fast_forwards > 0
    profile = {
        "new_tokens": list(grid.new_tokens),
        "context": list(grid.contexts),
        "ms": ms,
        "encoder_ms": round(time_encoder(model, grid), 4),
        "tree_ms": tree_ms if grid.tree else None,
        "model": name,
        "shape": shape,
        "params": sum(p.numel() for p in model.parameters()),
        "decoder": asdict(model.cfg.decoder),
        "has_audio_encoder": model.audio is not None,
        "device": device.type,
        "device_name": device_name(device),
        "dtype": dtype_name(model.dtype),
        "fast_path": fast_used,
        "engine": ("FastEngine (CUDA graphs)" if engine.uses_graphs else "FastEngine (static, no graphs)")
        if fast_used else "Engine (eager)",
        "fast_attention": {f"{tb}x{lb}": k for (tb, lb), k in sorted(engine.chosen.items())} if fast_used else None,
        "torch": torch.__version__,
        "ticktock": __version__,
        "threads": torch.get_num_threads() if device.type == "cpu" else None,
        "statistic": f"median of {grid.repeats} passes over the grid after {grid.warmup} warm-up runs per point; "
                     "wall time, device synchronised",
        "context_means": "resident KV slots before the forward",
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    return profile


def summarize(profile: dict) -> dict:
    """One line for machines: 1-token ms per context and the 32/128-token cost ratios."""
    ctx, nt, ms = profile["context"], profile["new_tokens"], profile["ms"]
    out = {k: profile.get(k) for k in ("model", "device_name", "dtype", "fast_path", "encoder_ms")}
    if 1 in nt:
        i1 = nt.index(1)
        out["one_token_ms"] = {str(c): ms[j][i1] for j, c in enumerate(ctx)}
        for n in (32, 128):
            if n in nt:
                out[f"ratio_{n}"] = {str(c): round(ms[j][nt.index(n)] / ms[j][i1], 3) for j, c in enumerate(ctx)}
    if profile.get("tree_ms"):
        out["tree_over_chain_max"] = round(max(t / m for tr, mr in zip(profile["tree_ms"], ms)
                                               for t, m in zip(tr, mr)), 3)
    return out


def write_profile(profile: dict, path: str | Path) -> Path:
    """JSON with one key per line and one matrix row per line (diffable, still plain JSON)."""
    def fmt(v):
        if isinstance(v, list) and v and isinstance(v[0], list):
            return "[\n  " + ",\n  ".join(json.dumps(r) for r in v) + "\n ]"
        return json.dumps(v)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\n" + ",\n".join(f" {json.dumps(k)}: {fmt(v)}" for k, v in profile.items()) + "\n}\n")
    return path


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
