"""Shared CLI plumbing: common flags, the client, the one output contract, exit codes.

The --json contract: success prints one JSON document on stdout (its schema: `--json-schema`);
every error prints `{"error": {"code": ..., "message": ...}}` on stdout and exits non-zero.
Times are ISO-8601 strings. Imports stay light: `--help` and daemon-only commands start fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from memoryd.client import MemorydClient
    from memoryd.config import Settings

# 0 ok; 1 the daemon refused, a check failed, or grep found nothing; 2 bad usage or config; 3 the daemon is not running.
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_DOWN = 0, 1, 2, 3
EXIT_API = EXIT_FAIL
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FAIL: "the daemon refused the request, a check failed, or grep found no match",
    EXIT_USAGE: "bad usage or configuration",
    EXIT_DOWN: "the daemon is not running",
    130: "interrupted",
}


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors follow the --json contract when --json is on the line, and
    name the closest command, choice or flag; an unknown flag is reported by its own subcommand."""

    given: list[str] = []  # the words this parser was handed: a required-argument error still names a typo in them

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.given = [str(word) for word in (sys.argv[1:] if args is None else args)]
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            from memoryd.cli.help import chosen_subparser

            chosen_subparser(self, parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def error(self, message: str) -> NoReturn:
        from memoryd.cli.help import suggestion

        message += suggestion(self, message, self.given)
        if "--json" in sys.argv[1:]:
            print_json(error_json("usage", f"{message}; see `{self.prog} --help`."))
            raise SystemExit(EXIT_USAGE)
        super().error(message)


class _PrintSchema(argparse.Action):
    """--json-schema: print the command's schema and exit, like --version (no other argument needed)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from memoryd.cli.schemas import schema_for

        print_json(schema_for(parser.prog.split(" ", 1)[1], EXIT_CODES))
        parser.exit(EXIT_OK)


def common(parser: argparse.ArgumentParser, *, cwd: bool = True) -> argparse.ArgumentParser:
    """Flags every command takes: --json, --json-schema, and --cwd for project-scoped ones."""
    parser.add_argument("--json", action="store_true", help="machine-readable JSON on stdout (errors too)")
    parser.add_argument(
        "--json-schema", action=_PrintSchema, help="print the JSON Schema of this command's --json output and exit"
    )
    if cwd:
        parser.add_argument("--cwd", default=None, help="project directory (default: the current directory)")
    return parser


def cwd_of(args: argparse.Namespace) -> str:
    return os.path.abspath(args.cwd or os.getcwd())


def settings_of(args: argparse.Namespace) -> Settings:
    """The full settings (pydantic): for commands that need more than the daemon's address."""
    from memoryd.config_sources import load_settings

    return load_settings()


def client_of(args: argparse.Namespace, *, timeout: float = 10.0) -> MemorydClient:
    """A client of the running daemon, found without loading the settings (fast start)."""
    from memoryd.client import MemorydClient

    return MemorydClient.from_env(timeout=timeout)


# ------------------------------------------------------------------ output
def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")


def normalize(data: Any) -> Any:
    """One time format: epoch numbers under the time keys become ISO-8601 strings (UTC)."""
    from memoryd.cli.schemas import is_time_key  # the contract's time keys (schemas.py is also run as a script)

    if isinstance(data, dict):
        return {
            k: iso(v) if is_time_key(k) and isinstance(v, (int, float)) and not isinstance(v, bool) else normalize(v)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [normalize(v) for v in data]
    return data


def error_json(code: str, message: str) -> dict[str, dict[str, str]]:
    """The one error shape of every command (its schema: shapes.CliError)."""
    return {"error": {"code": code, "message": message}}


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def styled() -> bool:
    """Tables and colour only on a terminal (and not under NO_COLOR); plain text when piped."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def emit(args: argparse.Namespace, data: Any, human: Callable[[Any], Any] | str | None = None) -> None:
    """Print JSON with --json, else the human rendering: a string, or a rich renderable on a terminal."""
    data = normalize(data)
    if getattr(args, "json", False) or human is None:
        print_json(data)
        return
    out = human(data) if callable(human) else human
    if out is None or out == "":
        return
    if isinstance(out, str):
        print(out)
        return
    from rich.console import Console

    Console(highlight=False).print(out)


def when(iso_text: str | None) -> str:
    """An ISO timestamp as people read it: local time to the second (JSON output keeps ISO)."""
    if not iso_text:
        return "-"
    try:
        moment = datetime.fromisoformat(str(iso_text).replace("Z", "+00:00"))
    except ValueError:
        return str(iso_text)
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def fail(args: argparse.Namespace | None, message: str, exit_code: int = EXIT_FAIL, code: str = "failed") -> int:
    """Report an error by the contract: JSON on stdout with --json, one line on stderr otherwise."""
    if args is not None and getattr(args, "json", False):
        print_json(error_json(code, message))
    else:
        print(f"memoryd: {message}", file=sys.stderr)
    return exit_code


def run_command(args: argparse.Namespace) -> int:
    """Run `args.func(args)`; map errors to one clear message and an exit code."""
    from memoryd.base.errors import ApiError, ConfigError, DaemonNotRunning, MemorydError

    try:
        return int(args.func(args) or 0)
    except DaemonNotRunning as exc:
        return fail(args, exc.message, EXIT_DOWN, exc.code)
    except ApiError as exc:
        return fail(args, exc.message, EXIT_FAIL, exc.code)
    except ConfigError as exc:
        return fail(args, exc.message, EXIT_USAGE, exc.code)
    except MemorydError as exc:
        return fail(args, exc.message, EXIT_USAGE if exc.status == 400 else EXIT_FAIL, exc.code)
    except KeyboardInterrupt:
        return 130


def table(headers: list[str], rows: list[list[Any]], *, title: str | None = None, empty: str = "") -> Any:
    """Rows as a rich table with colour on a terminal; as plain two-space-separated lines when piped.
    Cells are text (never read as rich markup: a memory may hold brackets) or `mark()`s."""
    if not rows:
        return empty
    if not styled():
        return "\n".join(([title] if title else []) + ["  ".join(str(cell) for cell in row if cell) for row in rows])
    from rich.table import Table
    from rich.text import Text

    t = Table(*headers, title=title, title_justify="left", header_style="bold cyan", box=None, pad_edge=False)
    for row in rows:
        t.add_row(*(cell if isinstance(cell, Text) else Text(str(cell)) for cell in row))
    return t


def mark(ok: bool, yes: str = "ok", no: str = "FAIL") -> Any:
    """A status word: green or red text on a terminal, the plain word when piped."""
    word = yes if ok else no
    if not styled():
        return word
    from rich.text import Text

    return Text(word, style="green" if ok else "bold red")
