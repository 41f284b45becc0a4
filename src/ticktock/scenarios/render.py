"""Render a Script to 16 kHz audio with exact word times.

    renderer = EspeakRenderer()
    out = render_session(script, draw_voice(rng, "heldout"), rng, renderer)
    out.audio      # float32 (out.script.n_units * 16000,)
    out.words      # [{word, start, end, speaker, role, voice, gain_db}], seconds
    out.script     # the script laid out again with the voice's real word durations

The plan is laid out with each word's real duration (so all timing rules hold for the audio
actually produced), the word clips are mixed at their start samples, noise bursts of the
plan and the augmentation's noise floor are added relative to the user's speech level, and
a random gain is applied.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from ..audio.io import SAMPLE_RATE
from .augment import Augment, Chain, add_noise
from .effects import Mix
from .engines import Renderer
from .plan import Plan, Say
from .script import CHUNK_S, Script
from .text import spoken_words
from .timeline import realize
from .voices import Voice, draw_voice, split_of


# Raise when a change alters the audio of scripts rendered before (a cached suite stamped with another value is
# rendered again): 2 = request parts before a pause said with a continuing tone.
RENDERING = 2


@dataclass
class Rendered:
    audio: np.ndarray  # (n_units * 16000,) float32
    words: list[dict]
    script: Script
    voice: dict  # {"main": Voice dict, "other": Voice dict | None, "noise": {...} | None, "gain_db"[, "chain"]}


def _texts_by_voice(plan: Plan) -> dict[str, list[str]]:
    """What each voice says: its utterances' texts (backchannels with the main voice), in order."""
    out: dict[str, list[str]] = {"main": [], "other": []}
    for ev in plan.events:
        if isinstance(ev, Say):
            out[ev.voice].append(ev.text)
        elif ev.kind == "reply":
            out["main"].extend(bc.text for bc in ev.backchannels)
    return out


def _open_parts(plan: Plan) -> set[str]:
    """The texts of request parts a pause follows (role "part")."""
    return {ev.text for ev in plan.events if isinstance(ev, Say) and ev.role == "part"}


def _connected(renderer: Renderer, texts: list[str], voice: Voice, open_parts: Collection[str] = ()
               ) -> dict[str, tuple[np.ndarray, list]]:
    """The texts that `renderer` says in one go: text -> (clip, word times); none if it cannot. A part that a pause
    follows is said with a comma's continuing tone: the engine would close unpunctuated text as a sentence ends
    (a falling tone), which is how a turn ends, not how a person sounds who stops mid-sentence."""
    say = getattr(renderer, "utterances", None)
    if say is None:
        return {}
    said = {t: t + "," if t in open_parts and t[-1:].isalnum() else t for t in texts}
    whole = say([said[t] for t in texts], voice)
    return {t: whole[s] for t, s in said.items() if s in whole}


def render_session(script: Script, voice: Voice, rng: random.Random, renderer: Renderer,
                   augment: Augment = Augment(), other: Voice | None = None, chain: Chain | None = None,
                   connected: bool = False) -> Rendered:
    """Audio, word times and the re-timed script of one session in `voice`.

    `other` is the background talker's voice (drawn from the same split as `voice` when
    needed and not given). All randomness (noise, gain, `chain`) comes from `rng`; `chain`'s voice
    effects change each voice's clips before the layout (drawn for each voice), its channel effects the
    mixed session. `connected`: each utterance is said in one go where the voice's engine can do that with
    word times (`Renderer.utterances`), else word by word.
    """
    plan = Plan.from_dict(script.plan)
    texts = _texts_by_voice(plan)
    voices = {"main": voice}
    if texts["other"]:
        voices["other"] = other or draw_voice(rng, split_of(voice.name), exclude=voice.name)
    open_parts = _open_parts(plan)
    whole = {k: _connected(renderer, texts[k], v, open_parts) if connected else {} for k, v in voices.items()}
    wanted = {k: {w for t in texts[k] if t not in whole[k] for w in spoken_words(t)} for k in voices}
    clips = {k: renderer.words(wanted[k], v) for k, v in voices.items()}
    drawn: dict = {}
    if chain is not None:
        for k in clips:
            drawn[k] = chain.draw(rng)
            for fx, p in drawn[k][0]:
                clips[k] = {w: fx.apply(c, p) for w, c in clips[k].items()}
                whole[k] = {t: _stretched(fx.apply(c, p), c, times) for t, (c, times) in whole[k].items()}
    script, tl = realize(script, lambda w, v: len(clips[v][w]) / SAMPLE_RATE,
                         lambda t, v: whole[v][t][1] if t in whole[v] else None)

    audio = np.zeros(int(round(tl.n_units * CHUNK_S * SAMPLE_RATE)), dtype=np.float32)
    sq, n_speech = 0.0, 0
    for sd in tl.sounds:
        v = sd["voice"]
        clip = whole[v][sd["utterance"]][0] if "utterance" in sd else clips[v][sd["word"]]
        clip = clip * np.float32(10 ** (sd["gain_db"] / 20))
        a = int(round(sd["start"] * SAMPLE_RATE))
        audio[a: a + len(clip)] += clip[: len(audio) - a]
        if sd["speaker"] == "user":
            sq, n_speech = sq + float(np.sum(clip**2)), n_speech + len(clip)
    speech_rms = float(np.sqrt(sq / max(1, n_speech))) or 0.1

    gen = np.random.default_rng(rng.getrandbits(63))
    for nz in tl.noises:
        add_noise(audio, int(nz["start"] * SAMPLE_RATE), int(nz["end"] * SAMPLE_RATE), nz["color"],
                  nz["snr_db"], speech_rms, gen)
    floor = None
    if rng.random() < augment.noise_prob:
        floor = {"color": rng.choice(augment.colors), "snr_db": round(rng.uniform(*augment.snr_db), 1)}
        add_noise(audio, 0, len(audio), floor["color"], floor["snr_db"], speech_rms, gen)
    gain_db = round(rng.uniform(*augment.gain_db), 1)
    audio *= np.float32(10 ** (gain_db / 20))
    if chain is not None:
        mix = Mix(speech_rms, [c for v in clips.values() for c in v.values()] +
                  [c for v in whole.values() for c, _ in v.values()])
        for fx, p in drawn["main"][1]:
            audio = fx.apply(audio, p, mix)
    np.clip(audio, -1.0, 1.0, out=audio)
    info = {"main": voice.to_dict(), "other": voices["other"].to_dict() if "other" in voices else None,
            "noise": floor, "gain_db": gain_db}
    if chain is not None:
        info["chain"] = {k: [[type(fx).__name__, p] for fx, p in (v[0] + v[1] if k == "main" else v[0])]
                         for k, v in drawn.items()}
    return Rendered(audio, tl.words, script, info)


def _stretched(clip: np.ndarray, before: np.ndarray, times: list[tuple[float, float]]) -> tuple[np.ndarray, list]:
    """A connected clip after an effect, its word times scaled with its length (tempo changes it uniformly)."""
    k = len(clip) / max(1, len(before))
    return clip, [(a * k, b * k) for a, b in times]
