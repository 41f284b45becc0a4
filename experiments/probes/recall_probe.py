"""Can the model answer a recall question from an evicted cache when its transcripts are perfect?

For each recall question of a suite, the context is what `a2t` leaves at the end of the answer (old units as
text only, the last 5 whole), with the reference words as the transcript segments (the δ = 0.5 s rule) instead
of the model's own: `train.side_channel.memory_examples.build_memory_example`, ended at the answer. One teacher-forced forward;
an answer counts when every token of its recall units is the model's argmax. This separates reading from
memory (this probe) from transcribing into it (`ticktock memory`'s WER) and from the closed loop (its recall).
`train-long`: N fresh long sessions rendered from unused training seeds with training voices (what the trainer
draws), so a model that answers there and not on `long` has learnt its training answers by heart; `--swap` renames
their facts first (`train.fact_swap`), `--shuffle` lays their evicted exchanges out anew (`train.history_shuffle`); `--seeds S1,S2,...` renders those training seeds instead (a worker's long
sessions are `Mixture.render_long` of seed (100 * run seed + worker) * 1_000_003 + long_reuse * j, so a run's
own sessions can be probed).
`--runtime-kv`: the window is the session whole up to the answer under the runtime's eviction mask
(`train.side_channel.exact_examples`, `kv_visibility`): the transcripts keep the keys and values they were written with,
beside their audio, as in `ticktock memory`'s loop — where the default compacted window recomputes them without it.
Usage: python experiments/probes/recall_probe.py {long|heldout|quick|full|train-long} [MODEL_DIR] [--show] [--n N] [--swap]
       [--shuffle] [--seeds S1,S2,...] [--runtime-kv]
"""

from __future__ import annotations

import argparse
import json
import random

import numpy as np
import torch

from ticktock.bench.recall import recall_items
from ticktock.runtime import load_runtime
from ticktock.scenarios.script import UnitTarget
from ticktock.scenarios.store import ensure_suite
from ticktock.scenarios.suites import load_session
from ticktock.train.side_channel.exact_examples import build_exact_memory_example
from ticktock.scenarios.word_units import word_units
from ticktock.train.side_channel.kv_visibility import visibility
from ticktock.train.side_channel.fact_swap import swap_facts
from ticktock.train.side_channel.history_shuffle import shuffled_history
from ticktock.train.side_channel.memory_examples import build_memory_example
from ticktock.train.side_channel.examples import script_unit_spec
from ticktock.train.side_channel.mixture import Mixture
from ticktock.train.trainer import audio_embeddings, embed_inputs


def suite_windows(suite: str, p):
    """Per recall question of a suite: (session id, question, (system, units, words, audio), window end)."""
    folder, entries = ensure_suite(suite)
    for e in (e for e in entries if e.get("recall")):
        _, audio = load_session(folder, e)
        units = [script_unit_spec(UnitTarget.from_dict(u)) for u in e["units"]]
        words = word_units(e["words"], e["n_units"], p.chunk_seconds)
        for item in recall_items(e):
            tagged = [k for k in item.units if "recall" in e["units"][k]["tags"]]
            yield e["id"], item.question, (e["system"], units, words, audio), tagged[-1] + 1


def training_windows(seeds, p):
    """The same for the long training sessions rendered from `seeds`."""
    mix = Mixture(p, [])
    for seed in seeds:
        r = mix.render_long(seed)
        for end in r.recall_ends:
            yield f"train-long-{seed}", "", r.session, end


def runtime_window(p, rendered, end: int):
    """The exact example ending at `end`, its (T, T) mask, and the predictions of its last recall answer."""
    ex = build_exact_memory_example(p, *rendered, random.Random(0), "after_content", end=end, max_offset=1)
    unit_of = np.cumsum(ex.ids == p.id("unit")) - 1
    marked = np.flatnonzero(ex.recall)
    answer_units = set(unit_of[marked + 1].tolist())
    first = end - 1
    while first - 1 in answer_units:
        first -= 1
    return ex, torch.from_numpy(visibility(ex.kv_write, ex.kv_gone)), marked[unit_of[marked + 1] >= first]


def probe(suite: str, model_dir: str | None = None, show: bool = False, n: int = 3, swap: bool = False,
          seeds: list[int] | None = None, shuffle: bool = False, runtime_kv: bool = False) -> dict:
    torch.set_grad_enabled(False)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rt = load_runtime(model_dir, dev, side_channel=True)
    m, p = rt.model, rt.protocol
    # by default from 10**6 on, seeds no training run here has drawn (workers draw (100 * seed + worker) * 1_000_003 + i)
    seeds = seeds or list(range(10**6, 10**6 + n))
    windows = training_windows(seeds, p) if suite == "train-long" else suite_windows(suite, p)
    right = tokens = tokens_right = 0
    answers = []
    for session, question, rendered, end in windows:
        if runtime_kv:
            ex, mask, at = runtime_window(p, rendered, end)
        else:
            ex = build_memory_example(p, *rendered, random.Random(0), "after_content", max_gap=0, max_offset=1,
                                      end=end, swap=swap_facts if swap else None,
                                      shuffle=shuffled_history if shuffle else None)
            mask, at = None, np.flatnonzero(ex.recall)  # the answer's outputs (`UnitSpec.recall`)
        emb = audio_embeddings(m, torch.from_numpy(ex.audio.astype(np.float32))[None].to(dev), train=False)
        ids, slots = (torch.from_numpy(a)[None].to(dev) for a in (ex.ids, ex.audio_slot))
        h = m.lm(embed_inputs(m, ids, slots, emb), torch.from_numpy(ex.positions)[None].to(dev), new_mask=mask)[0]
        at = torch.from_numpy(at).to(dev)
        want = torch.from_numpy(ex.memory_labels).to(dev)[at]
        got = m.lm.logits(h[at]).argmax(-1)
        ok = bool((got == want).all())
        right, tokens, tokens_right = right + ok, tokens + len(at), tokens_right + int((got == want).sum())
        expected, said = p.decode(want.tolist()), p.decode(got.tolist())
        answers.append({"session": session, "question": question, "expected": expected, "argmax": said, "hit": ok})
        if show:
            print(f"{session}: {question} | {expected} | {said} | {ok}", flush=True)
    n_q = len(answers)
    return {"suite": suite, "model": rt.name, "swap": swap, "shuffle": shuffle, "runtime_kv": runtime_kv,
            "seeds": seeds if suite == "train-long" else None,
            "questions": n_q, "exact": round(right / max(n_q, 1), 4),
            "token_acc": round(tokens_right / max(tokens, 1), 4), "answers": answers}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite", choices=["long", "heldout", "quick", "full", "train-long"])
    ap.add_argument("model", nargs="?", default=None)
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--n", type=int, default=3, help="train-long: how many fresh sessions")
    ap.add_argument("--seeds", type=lambda v: [int(s) for s in v.split(",")], default=None)
    ap.add_argument("--swap", action="store_true")
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--runtime-kv", action="store_true")
    a = ap.parse_args()
    print(json.dumps(probe(a.suite, a.model, show=a.show, n=a.n, swap=a.swap, seeds=a.seeds, shuffle=a.shuffle,
                           runtime_kv=a.runtime_kv)))
