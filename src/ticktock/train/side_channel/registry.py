"""Where example sources, loss terms and adapters are found by the name a recipe gives them.

The package registers its own (`sources/`, `terms/`, `adapters.py`); an experiment registers more by importing
this module (`experiments/<name>/plugin.py`), and a recipe names that module under `plugins` so it is imported
before the recipe is read. The package never imports an experiment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T", bound=type)

SOURCES: dict[str, type] = {}  # name -> a `sources.Source` dataclass
TERMS: dict[str, type] = {}  # name -> a `terms.Term` dataclass
ADAPTERS: dict[str, type] = {}  # name -> an `adapters.Adapter` dataclass


def register(table: dict[str, type], name: str) -> Callable[[T], T]:
    """Class decorator: `@register(SOURCES, "plain")`. A name is registered once."""
    def add(cls: T) -> T:
        if name in table and table[name] is not cls:
            raise ValueError(f"{name!r} is registered already ({table[name].__module__})")
        table[name] = cls
        cls.name = name
        return cls
    return add


def build(table: dict[str, type], kind: str, spec: dict):
    """The dataclass `spec["name"]` of `table` with the rest of `spec` as its fields; a one-line error otherwise."""
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(sorted(table))}")
    try:
        return table[name](**spec)
    except TypeError as err:  # an unknown field
        raise ValueError(f"{kind} {name!r}: {err}") from None
