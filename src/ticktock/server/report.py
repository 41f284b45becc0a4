"""Reading a session's events: a readable live timeline (for `ticktock talk`) and summary figures."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.markup import escape

from ..audio import SAMPLE_RATE

DECISION_STYLE = {"listen": "dim", "speak": "green", "tool": "yellow"}


def percentiles(values: list[float], qs: tuple[int, ...] = (50, 99)) -> dict[str, float | None]:
    if not values:
        return {f"p{q}": None for q in qs}
    return {f"p{q}": round(float(np.percentile(values, q)), 2) for q in qs}


def summarize(events: list[dict]) -> dict:
    """Units, misses, errors and post-audio latency / lag percentiles of one session's events."""
    units = [e for e in events if e.get("type") == "unit"]
    closed = next((e for e in events if e.get("type") == "session.closed"), None)
    return {
        "units": len(units),
        "speak_units": sum(u["decision"] == "speak" for u in units),
        "tool_calls": sum(e.get("type") == "tool.call" for e in events),
        "misses": sum(u["miss"] for u in units),
        "errors": [e for e in events if e.get("type") == "error"],
        "post_audio_ms": percentiles([u["post_audio_ms"] for u in units]),
        "latency_ms": percentiles([u["latency_ms"] for u in units]),
        "lag_ms": percentiles([u["lag_ms"] for u in units]),
        "closed": closed is not None,
        "log_path": closed.get("log_path") if closed else None,
    }


class TalkPrinter:
    """Prints each event as one timeline line: unit, decision, a latency bar against the 1 s deadline, text."""

    BAR = 20  # characters for one deadline (1 s)

    def __init__(self, console: Console):
        self.console = console

    def __call__(self, ev: dict) -> None:
        kind, c = ev.get("type"), self.console
        if kind == "session.started":
            c.print(f"[bold]session {ev['session_id']}[/] · {ev['model']} · decoder {ev['decoder']} · "
                    f"tts {'on' if ev['tts'] else 'off'} · side channel {'on' if ev.get('side_channel') else 'off'} · "
                    f"log {ev['log_path']}")
            c.print(f"[dim]{'unit':>4}  {'decision':<8} {'post ms':>7} {'ℓ_t ms':>7} {'lag ms':>7}  "
                    f"{'latency vs 1 s deadline':<{self.BAR + 2}} output[/]")
        elif kind == "unit":
            self.heard(ev)
            c.print(self.unit_line(ev))
        elif kind == "tool.call":
            c.print(f"      [yellow]tool.call[/] {ev['call_id']}: {ev['call']}")
        elif kind == "tool.result":
            c.print(f"      [yellow]tool.result[/] {ev['call_id']} ({ev.get('source', 'client')}): {ev['result']}")
        elif kind == "audio.delta":
            ms = len(ev["audio"]) * 3 // 4 // 2 * 1000 // ev.get("sample_rate", SAMPLE_RATE)
            c.print(f"      [cyan]audio.delta[/] unit {ev['unit']}: {ms} ms of speech")
        elif kind == "error":
            c.print(f"[red]error {ev['code']}[/]: {ev['message']}")
        elif kind == "session.closed":
            self.heard(ev)
            c.print(f"[bold]session closed[/] ({ev.get('reason')}): {ev['units']} units · log {ev['log_path']}")

    def heard(self, ev: dict) -> None:
        """The side channel's transcript an event carries (that of unit `asr_unit`, docs/protocol.md), if any."""
        if (ev.get("asr") or "").strip():
            self.console.print(f"      [magenta]heard[/] unit {ev['asr_unit']}: {escape(ev['asr'].strip())}")

    def unit_line(self, u: dict) -> str:
        n = min(self.BAR + 2, round(u["latency_ms"] / 1000 * self.BAR))
        bar = ("█" * n).ljust(self.BAR + 2)
        bar = bar[: self.BAR] + "│" + bar[self.BAR + 1:]  # the 1 s deadline
        style = "red" if u["miss"] else "green" if u["latency_ms"] < 500 else "yellow"
        dec = u["decision"] or "?"
        out = u["tool_call"] or u["text"] or ""
        if u.get("tool_result"):
            out = f"[dim]⟵ {u['tool_result']}[/]  " + out
        return (f"{u['index']:>4}  [{DECISION_STYLE.get(dec, '')}]{dec:<8}[/] {u['post_audio_ms']:>7.0f} "
                f"{u['latency_ms']:>7.0f} {u['lag_ms']:>7.0f}  [{style}]{bar}[/] {out}")

    def summary(self, s: dict) -> None:
        self.console.print(f"[bold]{s['units']} units[/] · {s['speak_units']} speak · {s['tool_calls']} tool calls · "
                           f"{s['misses']} deadline misses · {len(s['errors'])} errors · post-audio p50/p99 "
                           f"{s['post_audio_ms']['p50']}/{s['post_audio_ms']['p99']} ms · ℓ_t p50/p99 "
                           f"{s['latency_ms']['p50']}/{s['latency_ms']['p99']} ms · lag p99 {s['lag_ms']['p99']} ms")
