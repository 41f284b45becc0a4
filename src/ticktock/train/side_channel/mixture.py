"""The fork-safe example maker of a recipe: seed -> one `SideChannelExample` from a freshly rendered session.

Each example comes from one of the recipe's sources, drawn by share. Sessions are rendered with training voices only,
as `data` (a `train base` data preset) renders them: `espeak` as the shipped side channel was trained, `multi-engine`
for a base retrained on it.

`delay_jitter` J: at inference the model opens its segments a little earlier or later than the δ = 0.5 s rule, and
distillation should cover the contexts that leaves too. Half the rendered sessions draw their emission delay δ from
[0.5 − J, 0.5 + J] s (one δ per session keeps the words in order) and teach through distillation only: their
transcript and open-decision targets are dropped, so the side channel itself still learns the rule's timing.

`hold_tags`: the units marked for the `pause` term (`UnitSpec.pause`) are those the script tags so: `pause` (inside
a paused request the base keeps listening), and `backchannel` if asked for (where a user's "uh-huh" ends while the
model speaks: the base keeps speaking).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from ...protocol import DuplexProtocol
from ...scenarios.word_units import EMISSION_DELAY_S, word_units
from ..data import DATA_PRESETS, TrainingData, render_training_script
from ..examples import IGNORE, UnitSpec
from .examples import SideChannelExample, pick_placement, recall_ends, script_unit_spec
from .sources import Source


@dataclass
class Rendered:
    """A rendered session: what the example builders take, the unit after each recall answer, and whether its
    timing is jittered (then it teaches through distillation only)."""

    session: tuple[str, list[UnitSpec], list[str], np.ndarray]  # (system, units, per-unit words, audio 16 kHz)
    recall_ends: list[int]
    jittered: bool
    left: int = 0  # examples still to cut from it (long sessions)

    def finish(self, ex: SideChannelExample) -> SideChannelExample:
        if self.jittered:  # the side channel's own targets keep the rule's timing
            ex.asr_labels[:] = IGNORE
            ex.open_target[:] = -1
        return ex


@dataclass
class Mixture:
    protocol: DuplexProtocol
    sources: list[Source]
    placement: str = "after_decision"
    family_weights: dict[str, float] | None = None
    delay_jitter: float = 0.0
    hold_tags: tuple[str, ...] = ("pause",)
    data: TrainingData = DATA_PRESETS["espeak"]  # how sessions are rendered (`train base`'s data presets)

    def __call__(self, seed: int) -> SideChannelExample:
        rng = random.Random(seed)
        source = self.sources[0]
        if len(self.sources) > 1:  # one source draws nothing here: its examples are its alone
            u, source = rng.random(), self.sources[-1]
            for s in self.sources:  # the shares sum to 1 (`Recipe`)
                if u < s.share:
                    source = s
                    break
                u -= s.share
        return source.example(self, rng, seed)

    def placement_for(self, rng: random.Random) -> str:
        return pick_placement(self.placement, rng)

    def render_training(self, rng: random.Random, seed: int) -> Rendered:
        """A short training session drawn by the recipe's family weights."""
        from ..base import draw_training_script

        return self.render(draw_training_script(rng, self.family_weights), seed)

    def long_session(self, seed: int, reuse: int) -> Rendered:
        """The worker's current long session, rendered anew once `reuse` examples were cut from it."""
        from ..base import _WORKER

        r = _WORKER.get("long")
        if r is None or r.left <= 0:
            r = _WORKER["long"] = self.render_long(seed)
            r.left = reuse
        r.left -= 1
        return r

    def render_long(self, seed: int) -> Rendered:
        """The long training session of `seed` (not the `long` suite's seeds)."""
        from ...scenarios.suites import GENERATORS

        script = GENERATORS["long"](random.Random(f"train-long:{seed}"))
        script.id = f"train-long-{seed}"
        return self.render(script, seed)

    def render(self, script, seed: int) -> Rendered:
        """A script rendered with training voices. The recall ends are the rendered script's: rendering lays the
        units out anew."""
        from ...scenarios.engines import Engines
        from ..base import _WORKER

        renderer = _WORKER.setdefault("renderer", Engines())
        r = render_training_script(self.data, script, random.Random(f"render:{seed}"), seed, renderer)
        units = [script_unit_spec(u, self.hold_tags) for u in r.script.units]
        jitter = self.jitter(seed)
        delay = EMISSION_DELAY_S if jitter is None else jitter
        words = word_units(r.words, r.script.n_units, self.protocol.chunk_seconds, delay)
        return Rendered((r.script.system, units, words, r.audio), recall_ends(r.script), jitter is not None)

    def jitter(self, seed: int) -> float | None:
        """The jittered δ (seconds) of the session rendered from `seed`, or None if it keeps the rule's."""
        rng = random.Random(f"delay:{seed}")
        if self.delay_jitter <= 0 or rng.random() < 0.5:
            return None
        return max(0.0, EMISSION_DELAY_S + rng.uniform(-self.delay_jitter, self.delay_jitter))
