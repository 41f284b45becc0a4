"""The first-hour check: plain requests recorded with a bare `espeak-ng -w` (its default voice, no `.json` beside the
wav), each through `ticktock demo --wav`, with the prompt the demo defaults to. Prints what the model said or called
per request and one JSON line. The requests are written as a user would say them, not from the generator's templates.

    python experiments/probes/bare_recordings.py [--model DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REQUESTS = {  # family -> what a user says
    "qa": "what is the capital of france",
    "timer": "set a timer for seven minutes",
    "flights": "find me a flight from tokyo to paris",
    "weather": "what's the weather in paris on friday?",
    "currency": "convert fifty dollars to yen.",
    "arithmetic": "what is two plus three",
    "sequence": "what comes after monday",
}


def said(units: list[dict]) -> str:
    """The session's replies and tool calls, in order."""
    parts = []
    for u in units:
        if u.get("tool_call"):
            parts.append(f"[{u['tool_call']}]")
        elif u.get("text"):
            parts.append(u["text"])
    return " ".join(parts).strip() or f"(no answer: {len(units)} units, all listen)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model directory (default: the shipped one)")
    ap.add_argument("--out", default="runs/bare-recordings", help="where the wavs go")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    espeak = os.environ.get("TICKTOCK_ESPEAK", "espeak-ng")
    results = {}
    for name, text in REQUESTS.items():
        wav = out / f"{name}.wav"
        subprocess.run([espeak, "-w", str(wav), text], check=True)
        cmd = [sys.executable, "-m", "ticktock.cli", "demo", "--wav", str(wav), "--json"]
        if args.model:
            cmd += ["--model", args.model]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        units = json.loads(proc.stdout.strip().splitlines()[-1])[name]
        results[name] = {"request": text, "said": said(units)}
        print(f"{name:10} {text!r:42} -> {results[name]['said']}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
