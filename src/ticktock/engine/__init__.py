"""Engines: one forward entry point over mixed inputs on a session's KV cache.

Two implementations of one interface (`Engine`):

* `Engine` (eager.py): plain PyTorch, any device; the oracle.
* `FastEngine` (fast.py): static shapes and CUDA graphs on a GPU (the static path without
  graphs on a CPU, for tests); falls back to the eager path for inputs it does not cover.

`BatchedEngine` (batched.py) runs one forward for several sessions, each on its own engine's cache;
`SessionGraphs` (session_graphs.py) runs a fixed set of sessions' forwards as CUDA graphs.

`make_engine(model, "auto" | "eager" | "fast")` picks one; "auto" is fast on CUDA, eager elsewhere.
"""

from __future__ import annotations

from typing import Callable, Union

from ..model.duplex import DuplexLM
from .batched import BatchedEngine, BatchRecord, batched_forward
from .session_graphs import SessionGraphs
from .eager import Engine, ForwardRecord, ForwardRequest, Segment, forward_inputs
from .fast import FastEngine
from .pool import EnginePool, borrowed_engine, engine_pool, graph_capture_summary

ENGINES = ("auto", "eager", "fast")
EngineFactory = Callable[[DuplexLM, int], Engine]  # (model, max_slots) -> a fresh engine
EngineChoice = Union[str, Engine, EngineFactory]


def make_engine(model: DuplexLM, kind: str = "auto", max_slots: int = 8192) -> Engine:
    """An engine of `kind` over `model`: "eager", "fast" (CUDA graphs on CUDA; the static path elsewhere)
    or "auto" (fast on CUDA, eager elsewhere)."""
    if kind not in ENGINES:
        raise ValueError(f"unknown engine {kind!r}; choose from {', '.join(ENGINES)}")
    cuda = model.device.type == "cuda"
    if kind == "eager" or (kind == "auto" and not cuda):
        return Engine(model, max_slots)
    return FastEngine(model, max_slots, mode="graph" if cuda else "static")


def resolve_engine(choice: EngineChoice, model: DuplexLM, max_slots: int) -> Engine:
    """An engine for a session: a name (`make_engine`), an engine instance (reused: e.g. across a
    benchmark's consecutive sessions, so CUDA graphs are captured once), or a factory."""
    if isinstance(choice, Engine):
        if choice.model is not model:
            raise ValueError("the engine given runs another model than the session's")
        return choice
    if isinstance(choice, str):
        return make_engine(model, choice, max_slots)
    return choice(model, max_slots)


__all__ = ["BatchRecord", "BatchedEngine", "SessionGraphs", "ForwardRequest", "batched_forward", "forward_inputs",
           "ENGINES", "Engine", "EngineChoice", "EngineFactory", "EnginePool", "FastEngine", "borrowed_engine",
           "engine_pool", "graph_capture_summary", "ForwardRecord", "Segment", "make_engine", "resolve_engine"]
