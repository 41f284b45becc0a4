"""Answers from the model's own hearing: each `phrasings` request transcribed by the model itself, then read.

The upper reach of a runtime that puts what the model heard into its context as a transcript before it replies
(the `a2t` path, experiments/retraining-plan.md): each session of the rendered `phrasings` suite is transcribed in
listening mode ("Transcribe what you hear.", as `listen_probe.py`), and that transcript takes the place of the
written request in a window read as text (`read_answers.read_ok`, teacher-forced, whole reply). A request answered
from its own transcript but missed heard is one the path could win; one missed from its transcript is not.

    python experiments/probes/self_read_answers.py MODEL_DIR [--heard FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter
from pathlib import Path

import torch

sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parent)]

from read_answers import read_ok

from ticktock.audio.io import load_audio
from ticktock.runtime import load_runtime
from ticktock.scenarios.phrasings import PHRASINGS
from ticktock.scenarios.store import ensure_suite
from ticktock.session import DuplexSession
from ticktock.train.examples import TRANSCRIBE_SYSTEM


def transcribe(rt, audio, n_units: int) -> str:
    """The words the model writes in listening mode over a session's units."""
    sess = DuplexSession(rt.model, rt.protocol, "ar", system=TRANSCRIBE_SYSTEM)
    said = [sess.step(audio[k * 16000:(k + 1) * 16000]) for k in range(n_units)]
    return " ".join(u.text for u in said if u.decision == "speak" and u.text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--heard", help="answers.py phrasings MODEL --jsonl FILE records, for the 2 x 2 table")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    rt = load_runtime(args.model)
    rt.model.eval()
    folder, entries = ensure_suite("phrasings")
    heard = {}
    if args.heard:
        heard = {i: json.loads(line)["ok"] for i, line in enumerate(Path(args.heard).read_text().splitlines())}
    counts, table = Counter(), Counter()
    for i, ((family, exchange), e) in enumerate(zip(PHRASINGS, entries)):
        hyp = transcribe(rt, load_audio(folder / e["audio"]), e["n_units"])
        ok = read_ok(rt.model, rt.protocol, family, dataclasses.replace(exchange, request=hyp or "uh"), seed=i)
        counts[family, ok] += 1
        h = heard.get(i)
        if h is not None:
            table[ok, h] += 1
        tag = f"heard {'ok' if h else 'WRONG'} " if h is not None else ""
        print(f"{'ok   ' if ok else 'WRONG'} {tag}{family:9s} {exchange.text}  ->  {hyp}", flush=True)
    for family in sorted({f for f, _ in counts}):
        print(f"self-read {family}: {counts[family, True]}/{counts[family, True] + counts[family, False]}")
    if table:
        print("self-read ok & heard ok", table[True, True], "· self-read ok & heard WRONG", table[True, False],
              "· self-read WRONG & heard ok", table[False, True], "· both WRONG", table[False, False])


if __name__ == "__main__":
    main()
