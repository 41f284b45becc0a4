"""The `ticktock` command line (docs/design.md §10). Each subcommand lives in `ticktock.commands`.

An error ends a command with one line on stderr, `ticktock: error: <what went wrong>; <what to do>`, and a
non-zero exit status (2: the command line or its input, 1: anything else); `--debug` (or TICKTOCK_DEBUG=1)
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

DEBUG_HELP = "on an error, show the traceback (also: TICKTOCK_DEBUG=1)"
EXTRAS = {"websockets": "server", "peft": "train", "matplotlib": "train", "jiwer": "bench", "pocketsphinx": "bench",
          "transformers": "dev", "playwright": "dev", "ray": "ray", "fastapi": "ray", "starlette": "ray"}  # the pyproject extra that installs a missing package


class CommandError(Exception):
    """An error for the person at the command line: `main` prints `ticktock: error: <message>`, exits `status`.

    The message says what went wrong and what to do about it, on one line."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


class Parser(argparse.ArgumentParser):
    """argparse's parser with its errors on one line: `ticktock demo: error: argument --decoder: invalid choice:
    'foo' (choose from ...); see `ticktock demo --help``."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {one_line(message)}; see `{self.prog} --help`\n")


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        return package_version("ticktock")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def explain(err: BaseException) -> tuple[str, int]:
    """(the one-line message, exit status) for an error that reached `main`."""
    from .audio import AudioError

    if isinstance(err, CommandError):
        return one_line(err), err.status
    if isinstance(err, AudioError):
        return f"{one_line(err)}; {err.hint or 'give a readable, non-empty audio file (wav, flac or ogg; any rate)'}", 2
    if isinstance(err, ModuleNotFoundError) and err.name:
        extra = EXTRAS.get(err.name.split(".")[0], "dev,server,train")
        return f"the Python package {err.name!r} is not installed; pip install -e '.[{extra}]'", 1
    if isinstance(err, FileNotFoundError):
        return f"{one_line(err)}; check the path", 2
    return f"{type(err).__name__}: {one_line(err)} (rerun with --debug or TICKTOCK_DEBUG=1 for the traceback)", 1


def _add_debug(parser: argparse.ArgumentParser) -> None:
    """`--debug` after any (sub)command too: `ticktock demo --debug` as well as `ticktock --debug demo`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
                _add_debug(sub)


COMMANDS = ["demo", "data", "train", "eval", "bench", "calibrate", "memory", "serve", "talk", "model"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="ticktock", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ticktock {version()}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"ticktock.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name and err.name.startswith("ticktock.commands"):
                continue  # not built yet
            raise
        mod.add_parser(sub)
    _add_debug(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or os.environ.get("TICKTOCK_DEBUG", "") not in ("", "0")
    if argv == ["--version"]:  # without building the parser, which imports every command (and torch)
        print(f"ticktock {version()}")
        return 0
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        if debug:
            raise
        print("ticktock: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if debug:
            raise
        message, status = explain(err)
        print(f"ticktock: error: {message}", file=sys.stderr)
        return status


if __name__ == "__main__":  # `python -m ticktock.cli`: the package's module runs, whose CommandError the commands raise
    from ticktock.cli import main as package_main

    sys.exit(package_main())
