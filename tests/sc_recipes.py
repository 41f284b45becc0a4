"""Small side-channel recipes for CPU tests, and a run of one on a test model with the test's own examples."""

from __future__ import annotations

from pathlib import Path

from ticktock.train.side_channel import Recipe, train_side_channel


def tiny_recipe(adapter: str = "lora", terms: tuple[str, ...] = ("ce", "memory", "distill"), steps: int = 30,
                lr: float = 3e-3, placement: str = "after_content", **kw) -> Recipe:
    """One plain source (the tests make their own examples), the named terms at weight 1, batches of 4."""
    return Recipe(sources=[{"name": "plain"}], terms=[{"name": t} for t in terms], adapter={"name": adapter},
                  placement=placement, steps=steps, batch=4, lr=lr, warmup=1, buffer=4, **kw)


def run_tiny(out: Path, recipe: Recipe, make, model=None, tokenizer=None, **kw) -> list[dict]:
    return train_side_channel(out, recipe, device="cpu", workers=1, make_example=make, model=model,
                              tokenizer=tokenizer, log_every=1, **kw)
