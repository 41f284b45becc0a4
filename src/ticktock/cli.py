"""The `ticktock` command line (DESIGN §10). Each subcommand lives in `ticktock.commands`."""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ["demo", "data", "train", "eval", "bench", "calibrate", "memory", "serve", "talk"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ticktock", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"ticktock.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name and err.name.startswith("ticktock.commands"):
                continue  # not built yet
            raise
        mod.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
