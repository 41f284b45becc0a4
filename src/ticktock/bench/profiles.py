"""Where calibration profiles live, and which one the cost-model clock uses by default.

A profile is the JSON that `ticktock calibrate` writes (see `docs/calibrate.md`).
In a source checkout they live in `<repo>/benchmarks/profiles/`; an installed package
carries copies in `ticktock/assets/profiles/`. `TICKTOCK_PROFILE_DIR` overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..session.idle_schedule import IdleSchedule

_HERE = Path(__file__).resolve()
PACKAGED_DIR = _HERE.parent.parent / "assets" / "profiles"
_REPO = _HERE.parents[3]  # <repo>/src/ticktock/bench/profiles.py
_REPO_DIR = _REPO / "benchmarks" / "profiles"

# The profile DIR for writing and reading: the checkout's benchmarks/profiles, else the packaged copies.
PROFILE_DIR = _REPO_DIR if (_REPO / "pyproject.toml").exists() and _REPO_DIR.is_dir() else PACKAGED_DIR

# Most realistic first: a 7B-class model on an H200, then the shipped tiny model on a CPU.
PREFERRED = ("h200-qwen2.5-7b-bf16.json", "cpu-ticktock-tiny.json")


def profile_dirs() -> list[Path]:
    """Directories searched for profiles, in order."""
    dirs = [Path(os.environ["TICKTOCK_PROFILE_DIR"])] if os.environ.get("TICKTOCK_PROFILE_DIR") else []
    for d in (PROFILE_DIR, _REPO_DIR, PACKAGED_DIR):
        if d not in dirs:
            dirs.append(d)
    return dirs


def find_profile(name: str) -> Path:
    """A profile by path, file name or stem (`h200-qwen2.5-7b-bf16`), searched in `profile_dirs()`."""
    p = Path(name)
    if p.exists():
        return p
    names = [name] if name.endswith(".json") else [name, f"{name}.json"]
    for d in profile_dirs():
        for n in names:
            if (d / n).is_file():
                return d / n
    raise FileNotFoundError(f"no calibration profile {name!r} in {', '.join(str(d) for d in profile_dirs())}")


def available_profiles() -> list[Path]:
    seen, out = set(), []
    for d in profile_dirs():
        for f in sorted(d.glob("*.json")) if d.is_dir() else []:
            if f.name not in seen:
                seen.add(f.name)
                out.append(f)
    return out


def default_profile() -> Path:
    """The profile `--clock cost` uses without `--calibration`: the H200 7B one if present, else the CPU tiny one."""
    for name in PREFERRED:
        for d in profile_dirs():
            if (d / name).is_file():
                return d / name
    raise FileNotFoundError(
        f"no calibration profile found (looked for {' or '.join(PREFERRED)} in "
        f"{', '.join(str(d) for d in profile_dirs())}). Create one with "
        f"`ticktock calibrate --shape tiny --device cpu --out {PROFILE_DIR / PREFERRED[1]}`, "
        "or pass --calibration FILE.")


def profile_for_clock(clock: str, calibration: str | None) -> str | None:
    """The profile path a command's `--clock cost` uses (`--calibration` by name or path, else the default);
    None for any other clock."""
    if clock != "cost":
        return None
    return str(find_profile(calibration) if calibration else default_profile())


def idle_schedule_for(clock: str, profile: str | None, device: str, asr_share: float) -> "IdleSchedule | None":
    """The idle-window schedule a command plans with: the cost clock's own profile, the shipped CPU
    profile for a wall clock on a CPU, else None (no profile of that device to plan with)."""
    from ..session.idle_schedule import IdleSchedule

    if clock == "cost" and profile:
        return IdleSchedule.from_profile(profile, asr_share)
    if clock == "wall" and device == "cpu":
        return IdleSchedule.from_profile(find_profile(PREFERRED[1]), asr_share)
    return None


def scheduled_protocol(protocol, clock: str, profile: str | None, device: str, asr_share: float):
    """`protocol` with the idle schedule's transcript cap applied (unchanged when there is no plan)."""
    schedule = idle_schedule_for(clock, profile, device, asr_share)
    return schedule.apply(protocol) if schedule is not None else protocol
