"""`ticktock talk`: stream a wav file to a running `ticktock serve` in real time and print the events as a timeline."""

from __future__ import annotations

import argparse
import asyncio
import json


def add_parser(sub) -> None:
    p = sub.add_parser("talk", help="stream a wav file to a ticktock server in real time; print the timeline")
    p.add_argument("--url", default="ws://127.0.0.1:8765")
    p.add_argument("--wav", required=True, help="audio file (any rate; resampled by the server)")
    p.add_argument("--decoder", default="sl")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--system", default=None, help="system prompt (default: the server's; for a shipped example, "
                                                   "its .json's)")
    p.add_argument("--frame-ms", type=int, default=100, help="audio per audio.append message")
    p.add_argument("--fast", action="store_true", help="send as fast as possible instead of in real time")
    p.add_argument("--json", action="store_true", help="last line: a summary and every event (audio elided) as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.console import Console

    from ..audio import AudioError, load_wav
    from websockets.exceptions import WebSocketException

    from ..server.client import stream_audio
    from ..server.report import TalkPrinter, summarize

    console = Console(stderr=args.json, highlight=False)
    if not console.is_terminal:
        console.width = 140  # one line per unit in logs too
    try:
        samples, rate = load_wav(args.wav)
    except AudioError as err:
        console.print(f"[red]{err}[/]")
        return 2
    system = args.system
    meta = Path(args.wav).with_suffix(".json")
    if system is None and meta.exists():
        system = json.loads(meta.read_text()).get("system")
    start = {"decoder": args.decoder, "temperature": args.temperature, **({"system": system} if system else {})}
    printer = TalkPrinter(console)
    console.print(f"streaming {args.wav} ({len(samples) / rate:.1f} s at {rate} Hz) to {args.url} · decoder {args.decoder}"
                  + ("" if not args.fast else " · as fast as possible"))
    try:
        events = asyncio.run(stream_audio(args.url, samples, rate, args.frame_ms, realtime=not args.fast,
                                          on_event=printer, **start))
    except (OSError, asyncio.TimeoutError, WebSocketException) as err:
        console.print(f"[red]cannot talk to {args.url}: {err}[/]")
        return 2
    summary = summarize(events)
    printer.summary(summary)
    if args.json:
        slim = [{k: v for k, v in e.items() if k != "audio"} for e in events]
        print(json.dumps({**summary, "events": slim}))
    return 0 if summary["closed"] else 1
