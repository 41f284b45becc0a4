"""How sure is the decision where a reply should start? Per unit of a suite's sessions, the decision and its margin
(top-1 minus top-2 logit), open loop, up to the first unit that does not listen.

A reply never started shows as small margins at the unit the script replies and large `listen` margins after it:
the model was unsure once and then, in silence, sure (`train.hesitation`).

    python experiments/probes/decision_margins.py MODEL_DIR [SUITE] [--ids 4,34,35]
"""

from __future__ import annotations

import argparse

import torch

from ticktock.audio.io import load_audio
from ticktock.runtime import load_runtime
from ticktock.scenarios.store import ensure_suite
from ticktock.session import DuplexSession


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("suite", nargs="?", default="phrasings")
    ap.add_argument("--ids", help="session indices, comma-separated (default: every session)")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    rt = load_runtime(args.model)
    folder, entries = ensure_suite(args.suite)
    ids = [int(i) for i in args.ids.split(",")] if args.ids else range(len(entries))
    for i in ids:
        e = entries[i]
        audio = load_audio(folder / e["audio"])
        session = DuplexSession(rt.model, rt.protocol, "ar", system=e["system"])
        want = next((u["index"] for u in e["units"] if u["decision"] != "listen"), None)
        out = []
        for k in range(e["n_units"]):
            unit = session.step(audio[k * 16000:(k + 1) * 16000])
            out.append(f"{'*' if k == want else ''}{unit.decision[0]}{unit.margins[0]:.1f}")
            if unit.decision != "listen":
                break
        print(f"{i:3d} {e['utterances'][0]['text'][:44]:44s} {' '.join(out)}")
    print("(l/s/t: listen, speak, tool; the number: top-1 minus top-2 logit; *: the unit the script replies)")


if __name__ == "__main__":
    main()
