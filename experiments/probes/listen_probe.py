"""How well a model hears: its word error rate in transcription mode.

The model gets the listening pre-training prompt ("Transcribe what you hear.") and each unit's
speech is compared with the words that ended in that chunk (jiwer WER after normalisation).
Sessions are rendered afresh in espeak-ng (`train` or `heldout` voices) or read from a rendered
suite (`suite:NAME`, e.g. `suite:heldout-sam`: the same scripts in another engine), so the
hearing of one model can be compared across engines.
Usage: python experiments/probes/listen_probe.py MODEL_DIR {train|heldout|suite:NAME} N
       python experiments/probes/listen_probe.py MODEL_DIR suite:NAME --ids 4,5,7   (those sessions' REF / HYP)
"""

from __future__ import annotations

import sys
from typing import Callable, Iterator

import numpy as np
import torch

from ticktock.audio.io import load_audio
from ticktock.bench.wer import corpus_wer
from ticktock.runtime import load_runtime
from ticktock.session import DuplexSession
from ticktock.train.examples import TRANSCRIBE_SYSTEM, transcription_units


def sessions(source: str, n: int) -> Iterator[tuple[np.ndarray, list[dict], int]]:
    """(audio (n_units * 16000,), word times, n_units) of n sessions of `source`."""
    if source.startswith("suite:"):
        from ticktock.scenarios.store import ensure_suite

        folder, entries = ensure_suite(source.removeprefix("suite:"))
        for e in entries[:n]:
            yield load_audio(folder / e["audio"]), e["words"], e["n_units"]
        return
    from ticktock.scenarios.espeak import EspeakRenderer
    from ticktock.scenarios.suites import render_script, script_at

    renderer = EspeakRenderer()
    for i in range(n):
        r = render_script(script_at(source, 10_000 + i, seed=7), source, renderer, seed=99 + i)
        yield r.audio, r.words, r.script.n_units


def main(model_dir: str, source: str, n: int, transform: Callable[[np.ndarray], np.ndarray] | None = None,
         quiet: bool = False, ids: set[int] | None = None) -> float:
    """Returns the corpus WER (printed, with three sessions' lines, unless `quiet`); `transform` changes each
    session's audio (its length kept) first; `ids` keeps only those sessions and prints each one's lines."""
    torch.set_grad_enabled(False)
    rt = load_runtime(model_dir)
    refs, hyps = [], []
    for i, (audio, words, n_units) in enumerate(sessions(source, n)):
        if ids is not None and i not in ids:
            continue
        audio = transform(audio) if transform else audio
        sess = DuplexSession(rt.model, rt.protocol, "ar", system=TRANSCRIBE_SYSTEM)
        said = [sess.step(audio[k * 16000:(k + 1) * 16000]) for k in range(n_units)]
        refs.append(" ".join(u.content for u in transcription_units(words, n_units) if u.content))
        hyps.append(" ".join(u.text for u in said if u.decision == "speak" and u.text))
        if (ids is not None or len(refs) <= 3) and not quiet:
            print(f"{i} REF {refs[-1]}\n{i} HYP {hyps[-1]}\n")
    wer = corpus_wer(refs, hyps)
    if not quiet:
        print(f"{source}: {len(refs)} sessions, WER {wer:.3f}")
    return wer


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[3] == "--ids":
        if not sys.argv[2].startswith("suite:"):  # rendered sources would render every session up to the last id
            sys.exit("--ids picks sessions of a rendered suite: SOURCE must be suite:NAME")
        chosen = {int(i) for i in sys.argv[4].split(",")}
        main(sys.argv[1], sys.argv[2], max(chosen) + 1, ids=chosen)
    else:
        main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
