"""How well a model hears: its word error rate in transcription mode on freshly rendered sessions.

The model gets the listening pre-training prompt ("Transcribe what you hear.") and each unit's
speech is compared with the words that ended in that chunk (jiwer WER after normalisation).
Usage: python experiments/probes/listen_probe.py MODEL_DIR {train|heldout} N
"""

from __future__ import annotations

import sys

import torch

from ticktock.bench.wer import corpus_wer
from ticktock.runtime import load_runtime
from ticktock.scenarios.espeak import EspeakRenderer
from ticktock.scenarios.suites import render_script, script_at
from ticktock.session import DuplexSession
from ticktock.train.examples import TRANSCRIBE_SYSTEM, transcription_units


def main(model_dir: str, split: str, n: int) -> None:
    torch.set_grad_enabled(False)
    rt = load_runtime(model_dir)
    renderer = EspeakRenderer()
    refs, hyps = [], []
    for i in range(n):
        script = script_at(split, 10_000 + i, seed=7)
        r = render_script(script, split, renderer, seed=99 + i)
        sess = DuplexSession(rt.model, rt.protocol, "ar", system=TRANSCRIBE_SYSTEM)
        said = [sess.step(r.audio[k * 16000:(k + 1) * 16000]) for k in range(r.script.n_units)]
        refs.append(" ".join(u.content for u in transcription_units(r.words, r.script.n_units) if u.content))
        hyps.append(" ".join(u.text for u in said if u.decision == "speak" and u.text))
        if i < 3:
            print(f"REF {refs[-1]}\nHYP {hyps[-1]}\n")
    print(f"{split}: {n} sessions, WER {corpus_wer(refs, hyps):.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
