"""The `memoryd` command for people: human output by default, `--json` for scripts.

Commands talk to the daemon over HTTP (`memoryd.client`); only `serve` builds a daemon.
Exit codes: 0 ok, 1 the API refused, 2 bad usage or config, 3 the daemon is not running.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from memoryd import __version__
from memoryd.cli import backfill, doctor, dream, grep, hooks, mcp, memories, recall, service, transfer
from memoryd.cli.output import run_command

# Each module adds its subcommands; a new command group is one line here.
COMMAND_MODULES = [service, memories, recall, dream, hooks, doctor, grep, mcp, backfill, transfer]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memoryd", description="Local memory for coding agents.")
    parser.add_argument("--version", action="version", version=f"memoryd {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return run_command(args)
