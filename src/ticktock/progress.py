"""Progress of long commands on stderr: a rich bar on a terminal, plain lines when stderr is a file or a pipe.

    with Progress("eval quick", total=540, unit="units") as bar:
        for entry in entries:
            bar.note(entry["id"])          # what is being worked on (shown on the terminal bar)
            ...
            bar.advance(entry["n_units"])

Both show the count, the rate (units per second) and the time left. Plain lines (a log file, CI) come every
`every_pct` percent or every `every_s` seconds, whichever is first, and once at the end:

    eval quick: 120/540 units (22%) · 3.1 units/s · 2m15s left
    eval quick: 540/540 units in 2m54s (3.1 units/s)

stdout stays free for a command's `--json` line.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TextColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress
from rich.text import Text


def duration(seconds: float) -> str:
    """42 -> '42s', 135 -> '2m15s', 7300 -> '2h01m'."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """A progress display for `total` work items called `unit` (sessions, units, ...); a context manager."""

    def __init__(self, label: str, total: int, unit: str = "units", *, console=None, every_pct: float = 10.0,
                 every_s: float = 30.0, enabled: bool = True) -> None:
        self.label, self.total, self.unit = label, max(0, int(total)), unit
        self.console = console or Console(stderr=True)
        self.every_pct, self.every_s, self.enabled = every_pct, every_s, enabled
        self.done = 0
        self._bar = None

    @property
    def terminal(self) -> bool:
        return bool(self.console.is_terminal)

    def __enter__(self) -> "Progress":
        self.t0 = self._last_t = time.perf_counter()
        self._last_pct = 0.0
        if self.enabled and self.terminal:
            self._bar = RichProgress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                                     TextColumn(self.unit), _Rate(), TextColumn("·"),
                                     TimeRemainingColumn(), TextColumn("left"), console=self.console)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def note(self, text: str) -> None:
        """What is being worked on now (on a terminal: beside the label)."""
        if self._bar is not None:
            self._bar.update(self._task, description=f"{self.label} · {text}")

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.total = max(self.total, self.done)  # work that grew as it went (the demo's extra silent units)
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=n, total=self.total)
            return
        now = time.perf_counter()
        pct = 100.0 * self.done / self.total if self.total else 100.0
        if self.done < self.total and (pct - self._last_pct >= self.every_pct or now - self._last_t >= self.every_s):
            self._last_pct, self._last_t = pct - pct % self.every_pct, now
            self._line(self.status(now))

    def status(self, now: float | None = None) -> str:
        """'120/540 units (22%) · 3.1 units/s · 2m15s left'."""
        elapsed = (now or time.perf_counter()) - self.t0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        left = f" · {duration((self.total - self.done) / rate)} left" if rate > 0 and self.total else ""
        return f"{self.done}/{self.total} {self.unit}{pct} · {rate:.3g} {self.unit}/s{left}"

    def _line(self, text: str) -> None:
        print(f"{self.label}: {text}", file=self.console.file, flush=True)  # not console.print: no wrapping

    def __exit__(self, exc_type, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, *exc)
        elif self.enabled and exc_type is None:
            elapsed = time.perf_counter() - self.t0
            rate = f" ({self.done / elapsed:.3g} {self.unit}/s)" if elapsed > 0 else ""
            self._line(f"{self.done}/{self.total} {self.unit} in {duration(elapsed)}{rate}")


class _Rate(ProgressColumn):
    """Items per second (rich's sliding-window estimate)."""

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.3g}/s" if speed else "–/s", style="progress.data.speed")
