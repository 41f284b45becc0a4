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


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)
