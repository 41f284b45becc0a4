"""Example sources: where a side-channel recipe's training examples come from, one dataclass each.

A recipe lists its sources with their shares (`recipe.Recipe.sources`); the `Mixture` draws one per example. A new
source is a `Source` dataclass registered under a name (`registry.SOURCES`).
"""

from .base import Source
from . import long, memory, plain  # noqa: F401  (each registers itself)

__all__ = ["Source"]
