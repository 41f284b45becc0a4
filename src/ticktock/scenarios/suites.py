"""Named suites of sessions (disjoint seeds, held-out voices for evaluation) and writing them.

    scripts = make_scripts("quick")                  # 45 Scripts, families round-robin
    write_suite("quick", "data/quick")               # data/quick/audio/<id>.wav + manifest.jsonl
    entries = load_manifest("data/quick")            # one dict per session

Manifest line: the Script dict + "audio" (wav path relative to the suite folder),
"voice" ({main, other, noise, gain_db}), "words" ([{word, start, end, speaker, role, voice,
gain_db}]), "suite", "sample_rate".
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field, replace
from multiprocessing import Pool
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np
import soundfile as sf

from ..audio.io import SAMPLE_RATE
from ..progress import Progress
from .augment import Augment
from .engines import Engines, Renderer
from .families import FAMILIES, long_session, tool_pair
from .phrasings import PHRASINGS, phrasing_script
from .render import RENDERING, Rendered, render_session
from .script import Script
from .voices import draw_voice

GENERATORS: dict[str, Callable[[random.Random], Script]] = {**FAMILIES, "tool_pair": tool_pair, "long": long_session}
POOL_MIN_SESSIONS = 32  # render in a process pool from this many sessions on


@dataclass(frozen=True)
class Suite:
    name: str
    n: int | None  # None: unbounded (training stream)
    split: str  # voice split: 'train' | 'heldout'
    seed: int
    families: tuple[str, ...] = tuple(FAMILIES)
    augment: Augment = field(default_factory=Augment)
    # (family, count) blocks after the round-robin sessions: a family added to a suite later leaves
    # the sessions before it (and every result measured on them) unchanged
    appended: tuple[tuple[str, int], ...] = ()
    # a suite written out session by session (`phrasings`): session i is scripts(i, rng), not a family's draw
    scripts: Callable[[int, random.Random], Script] | None = None
    # a shifted copy of another suite (`<suite>-jitter`): its scripts and voices, every session's audio
    # starting a seeded 0-1 s later, so speech falls anywhere against the 1 s chunks (labels re-timed)
    jitter_of: str | None = None
    # another suite's scripts spoken in another split's voices (`heldout-festival-kdl`)
    voiced_from: str | None = None
    # every utterance said in one go (`render_session(connected=True)`), not word by word (`heldout-connected`)
    connected: bool = False

    @property
    def source(self) -> str:
        """The suite whose scripts (and, for a shifted copy, voices) this one draws: itself, unless a copy."""
        return self.jitter_of or self.voiced_from or self.name

    def family_at(self, i: int) -> str:
        """The task family of session i."""
        j = i - (self.n or 0) + sum(c for _, c in self.appended)  # i's place among the appended sessions
        for family, count in self.appended:
            if 0 <= j < count:
                return family
            j -= count
        return self.families[i % len(self.families)]


SUITES: dict[str, Suite] = {s.name: s for s in (
    Suite("quick", 45, "heldout", seed=1001),
    Suite("heldout", 198, "heldout", seed=2002),
    # the nine families round-robin (756 sessions), then 40 two-call tool requests (65-128-token units)
    Suite("full", 796, "heldout", seed=3003, appended=(("tool_pair", 40),)),
    Suite("long", 10, "heldout", seed=4004, families=("long",)),
    # conversations for many sessions at once in real time (`bench --live --seconds 45`; docs/scaling.md)
    Suite("live", 32, "heldout", seed=8008, families=("long",)),
    Suite("pairs", 40, "heldout", seed=5005, families=("tool_pair",)),
    # takeover rates over 750 pauses and 418 backchannels: the 51 and 199 pauses
    # of `heldout` and `full` leave a takeover change uncertain by ±2-5 points
    Suite("takeover", 600, "heldout", seed=6006, families=("pause_handling", "backchannel")),
    # requests written by hand in other words than the generator's templates (scenarios/phrasings.py)
    Suite("phrasings", len(PHRASINGS), "heldout", seed=7007, families=("short_qa", "tool_call"),
          scripts=phrasing_script),
    Suite("train", None, "train", seed=0, families=(*FAMILIES, "tool_pair")),
)}
for _name in ("quick", "heldout"):  # `ticktock eval --phase-jitter`
    SUITES[f"{_name}-jitter"] = replace(SUITES[_name], name=f"{_name}-jitter", jitter_of=_name)
# `heldout`'s sessions spoken by other engines: SAM (the own held-out engine), flite (the outside check), both never
# in training, festival's kdl (an English festival voice that trains), MBROLA and Pico (training engines since n1-n3,
# experiments/retraining-plan.md); see scenarios/voices.py
for _name, _split in (("heldout-sam", "sam"), ("heldout-flite", "flite"), ("heldout-festival-kdl", "festival-kdl"),
                      ("heldout-mbrola", "mbrola-train"), ("heldout-pico", "pico-train")):
    SUITES[_name] = replace(SUITES["heldout"], name=_name, split=_split, voiced_from="heldout")
# `heldout`'s sessions, voices and noise, each utterance said in one breath as a person (or a bare `espeak-ng -w`)
# says it, instead of word by word
SUITES["heldout-connected"] = replace(SUITES["heldout"], name="heldout-connected", voiced_from="heldout",
                                      connected=True)
PHASE_JITTER_S = (0.0, 1.0)


def phase_shifted(script: Script, shift_s: float) -> Script:
    """`script` with its audio starting `shift_s` later. Rendering re-times the script from its plan, so
    every label moves with the audio."""
    script.plan = {**script.plan, "lead_s": round(script.plan["lead_s"] + shift_s, 3)}
    return script


def _suite(suite: str | Suite) -> Suite:
    return suite if isinstance(suite, Suite) else SUITES[suite]


def script_at(suite: str | Suite, i: int, seed: int | None = None) -> Script:
    """The i-th session of a suite (deterministic in suite, seed and i)."""
    s = _suite(suite)
    seed = s.seed if seed is None else seed
    rng = random.Random(f"{s.source}:{seed}:{i}")
    script = s.scripts(i, rng) if s.scripts is not None else GENERATORS[s.family_at(i)](rng)
    script.id = f"{s.name}-{i:05d}-{script.family}"
    if s.jitter_of is not None:
        script = phase_shifted(script, random.Random(f"{s.name}:{seed}:{i}:phase").uniform(*PHASE_JITTER_S))
    return script


def iter_scripts(suite: str | Suite, seed: int | None = None, start: int = 0) -> Iterator[Script]:
    """Scripts `start`, `start+1`, ... of a suite; endless for an unbounded suite."""
    s = _suite(suite)
    i = start
    while s.n is None or i < s.n:
        yield script_at(s, i, seed)
        i += 1


def make_scripts(suite: str | Suite, n: int | None = None, seed: int | None = None,
                 start: int = 0) -> list[Script]:
    """Scripts `start` .. `n - 1` of a suite (n default: the suite's size; required for 'train')."""
    s = _suite(suite)
    n = s.n if n is None else n
    if n is None:
        raise ValueError(f"suite {s.name!r} is unbounded: pass n")
    return [script_at(s, i, seed) for i in range(start, n)]


def render_script(script: Script, suite: str | Suite, renderer: Renderer,
                  seed: int | None = None) -> Rendered:
    """Render with the suite's voice split and augmentation; voice and noise depend only on
    (suite, seed, script id)."""
    s = _suite(suite)
    sid = script.id.replace(s.name, s.source, 1)  # a shifted copy keeps its source's voices and noise
    rng = random.Random(f"{s.source}:{s.seed if seed is None else seed}:{sid}:render")
    return render_session(script, draw_voice(rng, s.split), rng, renderer, s.augment, connected=s.connected)


def manifest_entry(r: Rendered, suite: str, audio_path: str) -> dict:
    return {**r.script.to_dict(), "audio": audio_path, "voice": r.voice, "words": r.words,
            "suite": suite, "sample_rate": SAMPLE_RATE}


_WORKER: dict = {}


def _render_one(job: tuple[dict, str, str, int | None]) -> dict:
    script_dict, suite, out_dir, seed = job
    renderer = _WORKER.setdefault("renderer", Engines())
    r = render_script(Script.from_dict(script_dict), suite, renderer, seed)
    rel = f"audio/{r.script.id}.wav"
    sf.write(os.path.join(out_dir, rel), r.audio, SAMPLE_RATE, subtype="PCM_16")
    return manifest_entry(r, suite, rel)


def write_suite(suite: str | Suite, out_dir: str | os.PathLike, n: int | None = None,
                progress: bool = True, seed: int | None = None, workers: int | None = None,
                kept: Sequence[dict] = ()) -> Path:
    """Render a suite to `out_dir/audio/<id>.wav` (16 kHz PCM16), `out_dir/manifest.jsonl` and
    `out_dir/rendering` (`render.RENDERING`);
    `kept`: the suite's first sessions, rendered already (their entries are written as they are),
    so only the sessions after them are rendered.

    The manifest is written beside and moved into place at the end, so a render that is
    stopped leaves the old manifest whole."""
    s = _suite(suite)
    out = Path(out_dir)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    jobs = [(sc.to_dict(), s.name, str(out), seed) for sc in make_scripts(s, n, seed, len(kept))]
    workers = workers or (os.cpu_count() or 1)
    manifest, partial = out / "manifest.jsonl", out / "manifest.jsonl.partial"
    # on stderr: a command's --json output on stdout must stay parseable when a suite is rendered first
    with open(partial, "w") as f, Progress(f"rendering {s.name}", len(jobs), "sessions", enabled=progress) as bar:
        for entry in kept:
            f.write(json.dumps(entry) + "\n")
        if len(jobs) >= POOL_MIN_SESSIONS and workers > 1:
            with Pool(workers) as pool:
                results = pool.imap(_render_one, jobs, chunksize=4)
                for entry in results:
                    f.write(json.dumps(entry) + "\n")
                    bar.advance()
        else:
            for job in jobs:
                f.write(json.dumps(_render_one(job)) + "\n")
                bar.advance()
    os.replace(partial, manifest)
    (out / "rendering").write_text(f"{RENDERING}\n")  # how it was rendered: store.ensure_suite reads it
    return manifest


class DamagedManifest(ValueError):
    """A manifest with a line that is not one JSON entry; `entries` holds the whole ones before it."""

    def __init__(self, path: Path, line: int, entries: list[dict]) -> None:
        super().__init__(f"{path}: line {line} is not a manifest entry (a render stopped or two at once?); "
                         f"the {len(entries)} entries before it are whole")
        self.entries = entries


def load_manifest(path: str | os.PathLike) -> list[dict]:
    """The entries of `path/manifest.jsonl` (or of a manifest file given directly).

    Raises DamagedManifest at the first line that is not a JSON object."""
    p = Path(path)
    p = p / "manifest.jsonl" if p.is_dir() else p
    entries: list[dict] = []
    with open(p) as f:
        for k, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                entry = None
            if not isinstance(entry, dict):
                raise DamagedManifest(p, k, entries)
            entries.append(entry)
    return entries


def load_session(path: str | os.PathLike, entry: dict) -> tuple[Script, np.ndarray]:
    """(Script, float32 16 kHz audio) of one manifest entry of the suite folder `path`."""
    p = Path(path)
    p = p.parent if p.is_file() else p
    audio, sr = sf.read(p / entry["audio"], dtype="float32")
    assert sr == SAMPLE_RATE, f"expected {SAMPLE_RATE} Hz, got {sr}"
    return Script.from_dict(entry), audio
