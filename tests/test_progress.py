"""Progress on long commands: plain lines with the rate and the time left when stderr is not a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from ticktock.progress import Progress, duration


def test_plain_lines_every_ten_percent_and_at_the_end():
    out = io.StringIO()
    with Progress("eval quick", 40, "sessions", console=Console(file=out), every_s=1e9) as bar:
        for _ in range(40):
            bar.advance()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10  # 10 %, 20 %, ... 90 %, and the last line
    assert lines[0].startswith("eval quick: 4/40 sessions (10%) · ") and "sessions/s" in lines[0]
    assert lines[0].endswith(" left")
    assert lines[-1].startswith("eval quick: 40/40 sessions in ")


def test_plain_lines_every_few_seconds_too():
    out = io.StringIO()
    with Progress("memory long", 1000, console=Console(file=out), every_s=0.0) as bar:
        bar.advance(1)
        bar.advance(1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[0].startswith("memory long: 1/1000 units (0%) · ")
    assert lines[1].startswith("memory long: 2/1000 units") and lines[2].startswith("memory long: 2/1000 units in ")


def test_disabled_and_failed_runs_say_nothing():
    out = io.StringIO()
    with Progress("x", 10, console=Console(file=out), enabled=False) as bar:
        bar.advance(10)
    try:
        with Progress("y", 10, console=Console(file=out)) as bar:
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert out.getvalue() == ""


def test_duration():
    assert [duration(s) for s in (0.4, 42, 135, 7300)] == ["0s", "42s", "2m15s", "2h01m"]
