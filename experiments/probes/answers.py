"""What a model answered and called on a suite's questions and tool requests, beside what the script expects:
one line per session (`ok` / `WRONG`), then the counts. Closed loop, AR greedy, the mock tools, as `ticktock eval`.

Usage: python experiments/probes/answers.py SUITE [MODEL_DIR] [--families short_qa,tool_call] [--n N]
                                           [--system-prompt default]   (SUITE heldout-jitter: `eval --phase-jitter`)
                                           [--jsonl FILE]   (one record per session: asked, voice, ok, said, calls, want)
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import torch

from ticktock.bench.quality import normalize, run_session
from ticktock.runtime import load_runtime
from ticktock.scenarios.compose import DEFAULT_SYSTEM_PROMPT
from ticktock.scenarios.store import ensure_suite
from ticktock.scenarios.suites import load_session


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("model", nargs="?")
    ap.add_argument("--families", default="short_qa,tool_call")
    ap.add_argument("--n", type=int, default=None, help="only the first N sessions of those families")
    ap.add_argument("--system-prompt", default=None, help="every session's prompt, or 'default' (as `ticktock eval`)")
    ap.add_argument("--jsonl", default=None, help="also write one record per session to this file")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    rt = load_runtime(args.model)
    folder, entries = ensure_suite(args.suite)
    entries = [e for e in entries if e["family"] in args.families.split(",")][:args.n]
    if args.system_prompt is not None:
        system = DEFAULT_SYSTEM_PROMPT if args.system_prompt == "default" else args.system_prompt
        entries = [{**e, "system": system} for e in entries]
    right = Counter()
    records = []
    for e in entries:
        _, audio = load_session(folder, e)
        out = run_session(rt.model, rt.protocol, e, audio)
        if out.tool_ok is not None:
            ok = out.tool_ok
            want = [u["content"] for u in e["units"] if u["decision"] == "tool"]
            got = [r.tool_call for r in out.units if r.decision == "tool"]
        else:
            ok = bool(out.answer_ok)
            want = normalize(" ".join(u["content"] for u in e["units"] if u["decision"] == "speak"))
            got = normalize(" ".join(r.text for r in out.units if r.decision == "speak"))
        heard = " ".join(u["content"] for u in e["units"] if u.get("heard"))[:70]
        right[e["family"], ok] += 1
        records.append(_record(e, out, ok))
        print(f"{'ok   ' if ok else 'WRONG'} {e['id']} want {want} got {got}" + (f"  ({heard})" if heard else ""))
    for fam in sorted({f for f, _ in right}):
        print(f"{fam}: {right[fam, True]}/{right[fam, True] + right[fam, False]}")
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)


def _record(e: dict, out, ok: bool) -> dict:
    """What a session asked (its user requests), in which voice, and what the model said and called."""
    asked = " ".join(u["text"] for u in e["utterances"] if u["speaker"] == "user" and u["role"] == "request")
    return {"id": e["id"], "asked": asked, "voice": e["voice"]["main"]["name"], "ok": ok,
            "said": " ".join(r.text for r in out.units if r.decision == "speak"),
            "calls": [r.tool_call for r in out.units if r.decision == "tool"],
            "want": e["answer"] if e["answer"] else e["tool_call"]}


if __name__ == "__main__":
    main()
