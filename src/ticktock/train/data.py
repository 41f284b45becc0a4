"""What `train base` renders, by preset (the recipe's `data`): `espeak` (the shipped model's data) or `multi-engine`.

`multi-engine` (experiments/retraining-plan.md) adds, per training session: other engines' training voices
beside espeak-ng's, those installed here (festival's, never an ARCTIC-based or flite voice; MBROLA's through
espeak-ng; Pico's), half the sessions said in one go instead of word by word (connected speech, word times from the
engine: espeak-ng's library events, `scenarios.espeak_connected`, or festival's segments), the augmentation chain
(`scenarios.augment.training_chain`), a random 0-1 s phase shift
(`suites.phase_shifted`, the rule of `eval --phase-jitter`), a system prompt from a varied set that
includes the live default (`scenarios.prompts`) and more request phrasings (`intents.fresh_phrasings`; half of the
requests composed from parts, `intents.shapes`).
`multi-engine-scrambled` adds to it 15 % of examples that transcribe a session whose user says its words in a random
order (`scrambled_share`, `scenarios.scrambled`): hearing the words said rather than the templates' prior
(experiments/listening_cpu). Pick it with `train base --config retrain --set data=multi-engine-scrambled`.
`multi-engine-read` adds to that 20 % of examples whose requests are read as text over silence, several to a
window (`read_share`, `train.read_requests`): the decision and the reply learnt from many phrasings a step.
`multi-engine-read-forms` draws its composed questions form first (`by_form`): a premise-first or either-or
question, written as a few whole sentences, is asked as often as a frame around a noun phrase.
`multi-engine-read-noisy` reads them as a listener might transcribe them, 15 % of the words misheard (`read_noise`,
`read_requests.mishear`): the reply learns to follow words heard, not only words read exactly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import lru_cache

from ..scenarios.intents.exchange import COMPOSED_SHARE
from ..scenarios.render import Rendered


@dataclass(frozen=True)
class TrainingData:
    name: str
    other_share: float = 0.0  # sessions spoken by other engines' training voices (`other_training_voices`)
    augment: bool = False  # the effect chain (the plain noise floor and gain otherwise)
    phase_jitter: bool = False
    prompts: bool = False
    fresh_phrasings: bool = False
    composed_share: float = COMPOSED_SHARE  # of the fresh phrasings, requests composed from parts (`intents.shapes`)
    by_form: bool = False  # composed requests drawn form first, each form of an intent alike (`shapes.Shapes`)
    connected_share: float = 0.0  # sessions whose utterances are said in one go (where the engine can)
    scrambled_share: float = 0.0  # examples that transcribe a session whose user says its words shuffled
    read_share: float = 0.0  # examples whose requests are read as text over silence (`read_requests`)
    read_noise: float = 0.0  # of the words read, the share misheard (`read_requests.mishear`)
    hesitate_share: float = 0.0  # dialogue sessions with one reply started a unit late (`hesitation`)


_MULTI_ENGINE = TrainingData("multi-engine", other_share=0.3, augment=True, phase_jitter=True, prompts=True,
                             fresh_phrasings=True, connected_share=0.5)
_SCRAMBLED = replace(_MULTI_ENGINE, name="multi-engine-scrambled", scrambled_share=0.15)
_READ = replace(_SCRAMBLED, name="multi-engine-read", read_share=0.2)
_READ_FORMS = replace(_READ, name="multi-engine-read-forms", by_form=True)
DATA_PRESETS = {p.name: p for p in (
    TrainingData("espeak"),
    _MULTI_ENGINE,
    _SCRAMBLED,
    _READ,
    _READ_FORMS,
    replace(_READ_FORMS, name="multi-engine-read-noisy", read_noise=0.15),
    replace(_READ_FORMS, name="multi-engine-hesitate", hesitate_share=0.3),
)}


@lru_cache(maxsize=1)
def festival_training_voices() -> tuple[str, ...]:
    """festival's training voices that are installed here."""
    from ..scenarios.festival import festival_voices
    from ..scenarios.festival_english import needs
    from ..scenarios.voices import FESTIVAL_TRAIN_VOICES, engine_voice

    installed = festival_voices()
    return tuple(v for v in FESTIVAL_TRAIN_VOICES if set(needs(engine_voice(v))) <= installed)


@lru_cache(maxsize=1)
def other_training_voices() -> tuple[str, ...]:
    """The training voices of engines other than espeak-ng's own that are installed here: festival's, MBROLA's
    (spoken by espeak-ng) and Pico's."""
    from ..scenarios.mbrola import mbrola_voices
    from ..scenarios.pico import pico_languages
    from ..scenarios.voices import PICO_TRAIN_VOICES, engine_voice

    pico = pico_languages()
    return (*festival_training_voices(), *mbrola_voices(),
            *(v for v in PICO_TRAIN_VOICES if engine_voice(v) in pico))


def check_data(data: TrainingData) -> str:
    """A line on what `data` will render; ValueError if something it needs is missing here."""
    said = ["espeak-ng's training voices"]
    if data.connected_share:
        from ..scenarios.espeak import EspeakError
        from ..scenarios.espeak_connected import ConnectedEspeak

        try:
            ConnectedEspeak()
        except EspeakError as e:
            raise ValueError(f"data {data.name} says utterances in one go: {e}") from None
        said.append(f"{data.connected_share:.0%} of sessions said in one go")
    if data.other_share:
        if not festival_training_voices():
            raise ValueError(f"data {data.name} needs festival and its training voices (scripts/prepare_festival.sh)")
        said.append(f"other engines' voices {', '.join(other_training_voices())}")
    if data.scrambled_share:
        said.append(f"{data.scrambled_share:.0%} of examples transcribe a user saying its words shuffled")
    if data.read_share:
        noise = f", {data.read_noise:.0%} of their words misheard" if data.read_noise else ""
        said.append(f"{data.read_share:.0%} of examples read requests as text{noise}")
    if data.augment:
        from ..scenarios.rooms import room_bank, rooms_path

        try:
            import pyworld  # noqa: F401  (the chain's WORLD resynthesis)

            if not rooms_path().exists():  # a bank made elsewhere ($TICKTOCK_ROOMS) needs no simulator
                import pyroomacoustics  # noqa: F401
        except ImportError as e:
            raise ValueError(f"data {data.name} needs {e.name}: pip install -e '.[augment]'") from None

        room_bank()
        said.append("augmentation chain on")
    return f"data {data.name}: {'; '.join(said)}"


def training_voice(data: TrainingData, rng: random.Random, others: tuple[str, ...] | None = None):
    """A training session's voice: one of the other engines' installed training voices (`others`) `other_share`
    of the time, else one of espeak-ng's training voices."""
    from ..scenarios.voices import RATE, Voice, draw_voice

    voices = (other_training_voices() if others is None else others) if rng.random() < data.other_share else ()
    return Voice(rng.choice(voices), rng.randint(*RATE)) if voices else draw_voice(rng, "train")


def render_training_session(data: TrainingData, rng: random.Random, seed: int, renderer,
                            family_weights: dict[str, float] | None = None,
                            reply_weights: dict[str, float] | None = None, scramble: bool = False) -> Rendered:
    """One fresh training session of `data`, drawn from `rng` (voices and noise from `seed`); `scramble`: its
    user's words said in a random order (`scenarios.scrambled`)."""
    from ..scenarios.intents.exchange import fresh_phrasings
    from ..scenarios.scrambled import scrambled
    from .base import draw_training_script

    with fresh_phrasings(data.fresh_phrasings, data.composed_share, data.by_form):
        script = draw_training_script(rng, family_weights, reply_weights)
    if scramble:
        script = scrambled(script, rng)
    return render_training_script(data, script, rng, seed, renderer)


def render_training_script(data: TrainingData, script, rng: random.Random, seed: int, renderer) -> Rendered:
    """`script` rendered as `data` renders its training sessions: prompt and phase shift drawn from `rng`, voices,
    noise and effects from `seed`. `espeak`: as the `train` suite renders it."""
    from ..scenarios.augment import CLEAN, Augment, training_chain
    from ..scenarios.prompts import training_prompt
    from ..scenarios.render import render_session
    from ..scenarios.suites import PHASE_JITTER_S, phase_shifted, render_script
    from ..scenarios.voices import draw_voice

    if data == DATA_PRESETS["espeak"]:
        return render_script(script, "train", renderer, seed=seed)
    if data.prompts:
        script.system = training_prompt(rng)
    if data.phase_jitter:
        script = phase_shifted(script, rng.uniform(*PHASE_JITTER_S))
    r = random.Random(f"train:{seed}:render")
    connected = r.random() < data.connected_share
    # the chain carries its own noise and gain: the plain floor and gain only without it
    return render_session(script, training_voice(data, r), r, renderer, CLEAN if data.augment else Augment(),
                          other=draw_voice(r, "train"), chain=training_chain() if data.augment else None,
                          connected=connected)
