"""Recall in the closed loop with the script's replies forced: does the model's own history break recall?

`ticktock memory` replays a session closed loop: every unit's output is the model's own, and wrong replies to
ordinary questions stay in the context. `experiments/probes/recall_probe.py` teacher-forces the whole window instead. This
sits between them: the runtime's own session, cache and `a2t` eviction, but every unit outside the recall
questions' windows (`bench.recall.recall_items`) commits the script's outputs (and gets the script's tool
results); only the recall windows are decoded greedily. `--oracle` writes the reference words (the δ = 0.5 s rule)
as the transcripts, else the side channel writes its own. So: forced + oracle near the probe, and the closed loop far
below, means the model's own replies are what breaks recall.
Usage: python experiments/probes/recall_forced_loop.py [MODEL_DIR] [--budget B] [--oracle] [--sessions N] [--show]
"""

from __future__ import annotations

import argparse
import json

import torch

from ticktock.bench.recall import recall_answers, recall_items
from ticktock.bench.runner import split_chunks
from ticktock.cache.policies.acoustic_to_text import AcousticToText
from ticktock.engine import Segment
from ticktock.protocol import Decision, DuplexProtocol, SlotKind
from ticktock.runtime import load_runtime
from ticktock.scenarios.store import ensure_suite
from ticktock.scenarios.suites import load_session
from ticktock.scenarios.word_units import word_units
from ticktock.session import DuplexSession, UnitResult


def forced_step(sess: DuplexSession, chunk, unit: dict, tool_result: str | None) -> UnitResult:
    """Feed one chunk and commit the script's outputs for its unit (one teacher-forced forward)."""
    p: DuplexProtocol = sess.protocol
    sess.prepare()
    audio = sess.front.push(chunk)
    segs = [Segment(audio, [int(SlotKind.AUDIO)] * audio.shape[0])]
    if tool_result is not None:
        segs.append(sess.ids_segment(p.tool_result_ids(tool_result), SlotKind.TOOL_RESULT))
    out = p.output_ids(Decision[unit["decision"].upper()], unit["content"], unit["turn_end"])
    kinds = [int(p.output_kind(t)) for t in out]
    if len(out) > 1:  # the last output is fed with the next forward, as the session's own are
        segs.append(Segment(torch.tensor(out[:-1]), kinds[:-1]))
    sess.engine.forward(segs, sess.index)
    sess.history += out
    sess.pending, sess.pending_kinds = [out[-1]], [kinds[-1]]
    res = UnitResult(sess.index, unit["decision"], list(out))
    parsed = p.parse(out)
    res.text, res.tool_call, res.terminator = parsed.text, parsed.tool_call, parsed.terminator
    sess.slack_due = res  # after_content: the trailing segment comes in the next unit's idle work
    sess.policy.apply(sess.engine.cache, sess.index)
    sess.index += 1
    sess.prepared = None
    return res


def run(model_dir: str | None, budget: int, oracle: bool, sessions: int | None, show: bool) -> dict:
    from ticktock.scenarios.world import tool_result

    torch.set_grad_enabled(False)
    rt = load_runtime(model_dir, "cpu", side_channel=True)
    p = rt.protocol
    folder, entries = ensure_suite("long")
    answers = []
    for e in [x for x in entries if x.get("recall")][:sessions]:
        _, audio = load_session(folder, e)
        free = {k for item in recall_items(e) for k in item.units}
        words = word_units(e["words"], e["n_units"], p.chunk_seconds) if oracle else None
        sess = DuplexSession(rt.model, p, "ar", system=e["system"], policy=AcousticToText(budget=budget),
                             max_slots=32768, side_channel="after_content", oracle_transcripts=words)
        units, pending = [], None
        for k, chunk in enumerate(split_chunks(audio, e["n_units"], sess.chunk_samples)):
            u = e["units"][k]
            if k - 1 not in free:  # after a forced unit, the script's tool result
                pending = u.get("tool_result") or None
            if k in free:
                r = sess.step(chunk, pending)
                pending = tool_result(r.tool_call) if r.tool_call else None
            else:
                r = forced_step(sess, chunk, u, pending)
            units.append(r)
        for a in recall_answers(e, units):
            answers.append({"session": e["id"], **a})
            if show:
                print(f"{e['id']}: {a['expected']} | {a['spoken']} | {a['hit']}", flush=True)
    hits = sum(a["hit"] for a in answers)
    return {"model": rt.name, "budget": budget, "oracle_transcripts": oracle, "questions": len(answers),
            "recall_hits": hits, "recall_acc": round(hits / max(len(answers), 1), 4), "answers": answers}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default=None)
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--sessions", type=int, default=None)
    ap.add_argument("--show", action="store_true")
    a = ap.parse_args()
    print(json.dumps(run(a.model, a.budget, a.oracle, a.sessions, a.show)))
