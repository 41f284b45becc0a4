"""Word audio from SAM, the Software Automatic Mouth (a 1982 formant synthesizer with its own English letter-to-sound
rules; the `sam-js` port run by node): the own held-out engine, never in training. One word at a time (`wordwise`):
SAM gives no word timings.

One node process renders a call's words. The package: $TICKTOCK_SAM (the `sam-js` folder), else
`scripts/prepare_sam.sh`'s install under the data folder's parent (~/.cache/ticktock/sam).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from .text import NOMINAL_RATE
from .voices import Voice, engine_voice
from .wordwise import WordByWord

# The voices of SAM's manual that sound like a person (its robot and extra-terrestrial are effects):
# name -> (speed, pitch, mouth, throat); a larger speed is slower, a smaller pitch higher.
PRESETS = {"sam": (72, 64, 128, 128), "elf": (72, 64, 110, 160), "stuffy": (82, 72, 105, 110),
           "old-lady": (82, 32, 145, 145)}

_SAY = """
const [lib, spec] = process.argv.slice(1); const SamJs = require(lib); const fs = require('fs');
const {words, options, folder} = JSON.parse(fs.readFileSync(spec, 'utf8'));
const sam = new SamJs(options);
words.forEach((w, i) => {
  const wav = sam.wav(w);
  if (!wav || !wav.length) { console.error(`SAM cannot say ${JSON.stringify(w)}`); process.exit(3); }
  fs.writeFileSync(`${folder}/${i}.wav`, Buffer.from(wav));
});
"""


class SamError(RuntimeError):
    pass


def sam_package() -> Path | None:
    """The `sam-js` folder, or None if it is not installed."""
    from .store import data_root

    path = Path(os.environ.get("TICKTOCK_SAM") or data_root().parent / "sam" / "node_modules" / "sam-js")
    return path if (path / "package.json").is_file() else None


def sam_available() -> bool:
    return sam_package() is not None and shutil.which("node") is not None


def sam_options(voice: Voice) -> dict[str, int]:
    """SAM's settings for `voice`: its preset, the speed scaled by the voice's rate."""
    name = engine_voice(voice.name)
    if name not in PRESETS:
        raise SamError(f"unknown SAM voice {name!r}: one of {', '.join(PRESETS)}")
    speed, pitch, mouth, throat = PRESETS[name]
    return {"speed": round(speed * NOMINAL_RATE / voice.rate), "pitch": pitch, "mouth": mouth, "throat": throat}


class SamRenderer(WordByWord):
    def __init__(self, cache_size: int = 4096) -> None:
        super().__init__(cache_size)
        package, self.node = sam_package(), shutil.which("node")
        if package is None or self.node is None:
            raise SamError("SAM not found: it needs node and sam-js (scripts/prepare_sam.sh, or set TICKTOCK_SAM)")
        self.package = package

    def synth(self, words: list[str], voice: Voice, folder: Path) -> list[tuple[float, float] | None]:
        spec = folder / "words.json"
        spec.write_text(json.dumps({"words": words, "options": sam_options(voice), "folder": str(folder)}))
        proc = subprocess.run([self.node, "-e", _SAY, str(self.package.resolve()), str(spec)], capture_output=True)
        if proc.returncode != 0:
            raise SamError(f"SAM failed in {voice.name}: {proc.stderr.decode()[:300]}")
        return [None] * len(words)  # SAM's silences are clean: the voiced frames find each word
