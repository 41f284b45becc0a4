"""Do requests read as text teach the same requests heard? A short CPU probe of `TrainingData.read_share`.

Registers two data presets, both the shipped sessions with fresh phrasings through the same renderer path, and
continues the shipped model (P2) on each for SECONDS:
- `espeak-read`: 30 % of the examples are windows of requests read as text over silence (`train.read_requests`);
- `espeak-heard`: the control, the same with none read.

    python experiments/reading_cpu/run.py train OUT SECONDS {espeak-read|espeak-heard}
    python experiments/reading_cpu/run.py train OUT SECONDS {espeak-read-forms|espeak-read-noisy} INIT_MODEL
    python experiments/phrasing_cpu/run.py eval MODEL phrasings phrasings-blind heldout   # the measure

The GPU stage (experiments/retraining-plan.md, data `multi-engine-read`) is the real test; a few hundred CPU steps
show whether the pipeline learns and which way the heard suites move, not a significant difference.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import torch

sys.path[:0] = [str(Path(__file__).parents[1])]

from cpu_probe import continue_on_cpu  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

DATA_PRESETS["espeak-read"] = TrainingData("espeak-read", fresh_phrasings=True, read_share=0.3)
DATA_PRESETS["espeak-heard"] = TrainingData("espeak-heard", fresh_phrasings=True)
# whether misheard reads (`read_noise`) move the heard suites, from a model that already reads (x3f's recipe)
DATA_PRESETS["espeak-read-forms"] = TrainingData("espeak-read-forms", fresh_phrasings=True, read_share=0.3,
                                                 by_form=True)
DATA_PRESETS["espeak-read-noisy"] = replace(DATA_PRESETS["espeak-read-forms"], name="espeak-read-noisy",
                                            read_noise=0.15)

if __name__ == "__main__":
    what = sys.argv[1]
    if what == "train":
        out, seconds, data, *init = sys.argv[2:]
        if init:  # a stage's model continued at its transcription share, one core per run
            torch.set_num_threads(1)
            continue_on_cpu(out, seconds, data, 41, init=init[0], extra=("--set", "transcribe_share=0.2"))
        else:
            continue_on_cpu(out, seconds, data, 41)
    else:
        raise SystemExit(f"unknown step {what!r}: train")
