"""The options every session-running command shares: which engine runs the forwards, in what dtype."""

from __future__ import annotations

import argparse

DTYPES = ("float32", "bfloat16", "float16")


def add_engine_options(p: argparse.ArgumentParser) -> None:
    from ..engine import ENGINES

    p.add_argument("--engine", default="auto", choices=ENGINES,
                   help="forward engine: fast = static shapes + CUDA graphs (the static path on a CPU), "
                        "eager = plain PyTorch; auto = fast on CUDA, eager elsewhere (default)")
    p.add_argument("--dtype", default="float32", choices=DTYPES,
                   help="model weights and activations (bfloat16 on a GPU for 7B-class speed; default float32)")


def pick_device(requested: str | None) -> str:
    """`--device` as given, or cuda when torch sees one and cpu otherwise; a clear error for cuda without one."""
    import torch

    from ..cli import CommandError

    device = requested or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise CommandError("--device cuda: no CUDA device is visible to torch; use --device cpu")
    return device


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)
