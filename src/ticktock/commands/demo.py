"""`ticktock demo`: run a session on the shipped model and print its chunk timeline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..audio import SAMPLE_RATE, load_audio, speech_end, split_chunks
from ..cli import CommandError
from ..decoding.registry import DECODERS
from ..progress import Progress
from ..runtime import load_runtime
from ..scenarios.compose import DEFAULT_SYSTEM_PROMPT
from ..scenarios.world import tool_result
from ..session import DuplexSession, make_clock
from .engine_options import add_engine_options, torch_dtype

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "examples"
TAIL_S = 2.5  # silence after the last speech: the model answers ~0.6 s after the user stops, then speaks
MAX_EXTRA_UNITS = 20  # more silent units while the model is still in its turn (speaking, or a tool result due)
LONG_UNITS = 30  # from this many units on, the demo shows its progress
DEADLINE_MS = 1000

DESCRIPTION = """\
Run a session (a shipped example, or your own recording) on the shipped model
and print its chunk timeline: per one-second unit, the model's decision, what it
says or which tool it calls, and how long that took."""
EPILOG = """\
your own recording:
  --wav FILE takes any readable audio file (wav, flac, ogg; any rate; mono or
  stereo). A FILE.json beside it may say what the session is, as the shipped
  examples do (src/ticktock/assets/examples/qa.json): "system" (the system
  prompt, unless --system is given) and "user" (what the user says, printed
  above the timeline). The model answers only after the user has stopped, so
  when the recording ends less than 2.5 s after its last speech, silence is
  appended (and more while the model is still answering); --no-pad: none.

  e.g.  espeak-ng -w q.wav "what is the capital of france"
        ticktock demo --wav q.wav
"""


def add_parser(sub) -> None:
    examples = ", ".join(sorted(x.stem for x in EXAMPLES.glob("*.wav"))) or "none"
    p = sub.add_parser("demo", help="run a session on the shipped model and print its timeline",
                       description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--example", default=None, help=f"a shipped example session ({examples}; default: all)")
    src.add_argument("--wav", default=None, metavar="FILE", help="your own recording instead of an example")
    p.add_argument("--system", default=None, metavar="TEXT",
                   help="the system prompt (default: FILE.json's, else the one the model was trained with: "
                        f"\"{DEFAULT_SYSTEM_PROMPT}\")")
    p.add_argument("--no-pad", action="store_true", help="no silence appended after the recording")
    p.add_argument("--model", default=None, help="model directory (default: the shipped ticktock-tiny)")
    p.add_argument("--decoder", default="sl", choices=list(DECODERS),
                   help="how each unit is decoded (all give the same tokens; default sl, Speculative Listening)")
    p.add_argument("--side-channel", default="off", choices=["off", "after_decision", "after_content"],
                   help="the model also transcribes what it hears into its own context (docs/side-channel.md)")
    p.add_argument("--transcript", action="store_true",
                   help="print what the side channel heard (turns it on, after_content, if it is off)")
    p.add_argument("--clock", default="wall", choices=["wall", "cost"])
    p.add_argument("--calibration", default=None, help="profile for --clock cost")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads on a CPU (default 1: for a model this small one thread is fastest, and it "
                        "stays fast when other work shares the cores)")
    add_engine_options(p)
    p.add_argument("--json", action="store_true", help="last line: the units as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import torch

    console = Console()
    if args.threads is not None and args.threads < 1:
        raise CommandError("--threads must be a positive integer")
    if args.device == "cpu" or args.threads:
        torch.set_num_threads(args.threads or 1)
    if args.wav:
        wavs = [Path(args.wav)]
    else:
        names = sorted(EXAMPLES.glob("*.wav"))
        if not names:
            raise CommandError("no shipped example sessions in this install; pass --wav FILE")
        wavs = [EXAMPLES / f"{args.example}.wav"] if args.example else names
        if not wavs[0].exists():
            raise CommandError(f"unknown example {args.example!r}; choose from {', '.join(n.stem for n in names)}")
    audio = {wav: load_audio(wav) for wav in wavs}  # bad audio (an AudioError: cli.main says why) before the model
    side = "after_content" if args.transcript and args.side_channel == "off" else args.side_channel
    side = None if side == "off" else side
    rt = load_runtime(args.model, args.device, torch_dtype(args.dtype), side_channel=side is not None)
    if not rt.trained:
        console.print("[bold yellow]No trained model is shipped: running a RANDOM-INIT ticktock-tiny; "
                      "its output is noise.[/]")
    out = {wav.stem: run_one(console, rt, wav, samples, args, side) for wav, samples in audio.items()}
    if args.json:
        print(json.dumps(out))
    return 0


def _meta(wav: Path) -> dict:
    """FILE.json beside FILE.wav ({} if there is none)."""
    meta_file = wav.with_suffix(".json")
    if not meta_file.exists():
        return {}
    try:
        meta = json.loads(meta_file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CommandError(f"{meta_file} is not JSON ({err}); fix it or move it away") from err
    if not isinstance(meta, dict):
        raise CommandError(f"{meta_file} must hold a JSON object ({{\"system\": ..., \"user\": [...]}})")
    return meta


def pad_tail(samples: np.ndarray, tail_s: float = TAIL_S) -> tuple[np.ndarray, float, float]:
    """(samples with silence appended so that at least `tail_s` follows the last speech, seconds appended,
    seconds of silence the recording had after its last speech)."""
    had = samples.size / SAMPLE_RATE - speech_end(samples)
    extra = max(0.0, tail_s - had)
    n = int(np.ceil(extra * SAMPLE_RATE))
    return np.concatenate([samples, np.zeros(n, dtype=np.float32)]), n / SAMPLE_RATE, had


def run_one(console: Console, rt, wav: Path, samples: np.ndarray, args: argparse.Namespace,
            side: str | None) -> list[dict]:
    meta = _meta(wav)
    system = args.system or meta.get("system") or DEFAULT_SYSTEM_PROMPT
    length = samples.size / SAMPLE_RATE
    appended, had = 0.0, None
    if not args.no_pad:
        samples, appended, had = pad_tail(samples)
    chunks = split_chunks(samples)
    clock = make_clock(args.clock, args.calibration, str(rt.model.device))
    sess = DuplexSession(rt.model, rt.protocol, args.decoder, clock=clock, engine=args.engine, system=system,
                         side_channel=side)
    if meta.get("user"):
        user = meta["user"] if isinstance(meta["user"], list) else [meta["user"]]
        said = " / ".join(f"“{escape(str(u))}”" for u in user)
        console.print(f"[bold]{escape(wav.name)}[/] — the user says: {said}")
    results, rows, pending = [], [], None
    with Progress(f"demo {wav.name}", len(chunks), "units", enabled=len(chunks) >= LONG_UNITS) as bar:
        k = 0
        while k < len(chunks) or (not args.no_pad and _turn_open(results, pending)
                                  and k < len(chunks) + MAX_EXTRA_UNITS):
            chunk = chunks[k] if k < len(chunks) else np.zeros(sess.chunk_samples, dtype=np.float32)
            r = sess.step(chunk, pending)
            pending = tool_result(r.tool_call) if r.tool_call else None  # the mock tools; input to the next unit
            results.append(r)
            rows.append((r, pending))
            bar.advance()
            k += 1
    sess.flush()  # the last unit's trailing transcript segment
    appended += (len(results) - len(chunks)) * rt.protocol.chunk_seconds

    if appended > 0:
        console.print(f"note: appended {appended:.1f} s of silence so the model can take its turn ({escape(wav.name)}, "
                      f"{length:.1f} s, ends {had:.1f} s after its last speech; --no-pad: none)", soft_wrap=True)
    console.print(f"[bold]{escape(wav.name)}[/] · {rt.name} · decoder {args.decoder} · {clock.name} clock")
    table = Table()
    for col in ("unit", "decision", "output", "ℓ_t ms", "lag ms", "fwd"):
        table.add_column(col, justify="right" if col in ("unit", "ℓ_t ms", "lag ms", "fwd") else "left")
    for r, result in rows:
        text = r.tool_call or r.text or ""
        if result:
            text += f"  → {result}"
        table.add_row(str(r.index), r.decision or "?", escape(text), f"{r.latency * 1000:.0f}",
                      f"{r.lag * 1000:.0f}", str(r.forwards))
    console.print(table)
    console.print(legend(rt.protocol.chunk_seconds * 1000), highlight=False)
    if side is not None:
        heard = " ".join(r.asr for r in results if r.asr)
        console.print(f"heard (side channel, {side}): {escape(heard) or '(nothing)'}", highlight=False)
    return [r.to_dict() for r in results]


def _turn_open(results: list, pending: str | None) -> bool:
    """Is the model still in its turn: a tool result is due, or its last unit spoke or called with chunk_eos?"""
    if pending is not None:
        return True
    return bool(results) and results[-1].decision in ("speak", "tool") and results[-1].terminator != "turn_eos"


def legend(chunk_ms: float = DEADLINE_MS) -> str:
    """What the timeline's columns mean, in lines of under 80 characters."""
    ms = f"{chunk_ms:,.0f} ms"
    return (f"ℓ_t ms  post-audio latency: from the end of the unit's audio chunk to its last\n"
            f"        token (from the end of the previous unit's work, if that is later);\n"
            f"        the deadline is {ms}, when the next chunk has arrived\n"
            f"lag ms  how far the session runs behind the audio: max(0, previous lag + ℓ_t\n"
            f"        - {ms}); a unit with lag > 0 missed its deadline\n"
            "fwd     model forwards after the audio arrived (ar: one per token; a decoder\n"
            "        that drafts ahead, such as sl, needs fewer)   more: docs/glossary.md")
