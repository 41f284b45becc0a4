"""Can the model answer a recall question from an evicted cache when its transcripts are perfect?

For each recall question of a suite, the context is what `a2t` leaves at the end of the answer (old units as
text only, the last 5 whole), with the reference words as the transcript segments (the δ = 0.5 s rule) instead
of the model's own: `train.memory_data.build_memory_example`, ended at the answer. One teacher-forced forward;
an answer counts when every token of its recall units is the model's argmax. This separates reading from
memory (this probe) from transcribing into it (`ticktock memory`'s WER) and from the closed loop (its recall).
Usage: python scripts/recall_probe.py {long|heldout|quick|full} [MODEL_DIR] [--show]
"""

from __future__ import annotations

import json
import random
import sys

import numpy as np
import torch

from ticktock.evaluation.recall import recall_items
from ticktock.protocol import Decision
from ticktock.runtime import load_runtime
from ticktock.scenarios.store import ensure_suite
from ticktock.scenarios.suites import load_session
from ticktock.train.examples import IGNORE, UnitSpec, word_units
from ticktock.train.memory_data import build_memory_example
from ticktock.train.trainer import audio_embeddings, embed_inputs


def probe(suite: str, model_dir: str | None = None, show: bool = False) -> dict:
    torch.set_grad_enabled(False)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rt = load_runtime(model_dir, dev, side_channel=True)
    m, p = rt.model, rt.protocol
    folder, entries = ensure_suite(suite)
    right = tokens = tokens_right = 0
    answers = []
    for e in (e for e in entries if e.get("recall")):
        _, audio = load_session(folder, e)
        units = [UnitSpec(Decision[u["decision"].upper()], u["content"], u["turn_end"], u.get("tool_result"))
                 for u in e["units"]]
        words = word_units(e["words"], e["n_units"], p.chunk_seconds)
        for item in recall_items(e):
            tagged = [k for k in item.units if "recall" in e["units"][k]["tags"]]
            ex = build_memory_example(p, e["system"], units, words, audio, random.Random(0), "after_content",
                                      max_gap=0, max_offset=1, end=tagged[-1] + 1)
            emb = audio_embeddings(m, torch.from_numpy(ex.audio.astype(np.float32))[None].to(dev), train=False)
            ids, slots = (torch.from_numpy(a)[None].to(dev) for a in (ex.ids, ex.audio_slot))
            x = embed_inputs(m, ids, slots, emb)
            h = m.lm(x, torch.from_numpy(ex.positions)[None].to(dev))[0]
            # the recall units' outputs: every supervised token after the first recall unit's marker
            first = [i for i, t in enumerate(ex.ids.tolist()) if t == p.id("unit")][-len(tagged)]
            at = [i for i, t in enumerate(ex.memory_labels.tolist()) if t != IGNORE and i >= first]
            want = torch.from_numpy(ex.memory_labels[at]).to(dev)
            got = m.lm.logits(h[at]).argmax(-1)
            ok = bool((got == want).all())
            right, tokens, tokens_right = right + ok, tokens + len(at), tokens_right + int((got == want).sum())
            answers.append({"session": e["id"], "question": item.question, "expected": item.answer,
                            "argmax": p.decode(got.tolist()), "hit": ok})
            if show:
                print(f"{e['id']}: {item.question} | {item.answer} | {p.decode(got.tolist())} | {ok}", flush=True)
    n = len(answers)
    return {"suite": suite, "model": rt.name, "questions": n, "exact": round(right / max(n, 1), 4),
            "token_acc": round(tokens_right / max(tokens, 1), 4), "answers": answers}


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--show"]
    if len(args) not in (1, 2):
        raise SystemExit(__doc__)
    print(json.dumps(probe(*args, show="--show" in sys.argv)))
