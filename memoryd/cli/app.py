"""The `memoryd` command's parser: every command module adds its subcommands here (`memoryd.cli.main` runs it)."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import Any

from memoryd.cli import (
    backfill,
    config,
    doctor,
    dream,
    grep,
    guard,
    hook,
    hooks,
    mcp,
    memories,
    recall,
    review,
    service,
    setup,
    stale,
    team,
    transfer,
    ui,
    uninstall,
)
from memoryd.cli.help import describe
from memoryd.cli.output import EXIT_OK, EXIT_USAGE, Parser, run_command

# Each module adds its subcommands; a new command group is one line here.
COMMAND_MODULES = [
    setup,
    uninstall,
    service,
    memories,
    recall,
    dream,
    hooks,
    hook,
    doctor,
    grep,
    mcp,
    backfill,
    team,
    ui,
    review,
    stale,
    transfer,
    config,
    guard,
]

EPILOG = """exit codes: 0 ok; 1 the daemon refused, a check failed, or grep found nothing;
2 bad usage or config; 3 the daemon is not running.
--json: one JSON document on stdout, errors as {"error": {"code", "message"}};
--json-schema prints a command's schema."""


class _Version(argparse.Action):
    """--version, worked out only when asked: the release from the package, the commit from git or the wheel."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from memoryd.version import version

        print(f"memoryd {version()}")
        parser.exit(EXIT_OK)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="memoryd",
        description="Local memory for coding agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="print memoryd's version (release+commit) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    describe(parser)
    parser.set_defaults(root_parser=parser)  # `memoryd completion` prints it, without importing this module back
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):  # `memoryd show x | head`: end quietly when the reader goes, like other CLI tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return run_command(args)
