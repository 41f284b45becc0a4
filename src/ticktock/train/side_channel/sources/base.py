"""The base of the example sources: `Source`, what every source dataclass is; the package imports every registered one."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..examples import SideChannelExample

if TYPE_CHECKING:
    from ..mixture import Mixture


@dataclass
class Source:
    """One kind of example; `share` of a recipe's examples come from it."""

    name: ClassVar[str]
    share: float = 1.0
    memory: ClassVar[bool] = False  # its examples carry memory targets (`memory_labels`): the `memory` term's

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(f"source {self.name!r}: share must be within [0, 1], got {self.share}")

    def example(self, mix: Mixture, rng: random.Random, seed: int) -> SideChannelExample:
        raise NotImplementedError

