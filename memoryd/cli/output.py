"""Shared CLI plumbing: common flags, the client, output, and error → exit code mapping."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from typing import Any, Callable

from memoryd.client import ApiError, DaemonNotRunning, MemorydClient
from memoryd.config import Settings, load_settings
from memoryd.errors import MemorydError

EXIT_OK, EXIT_API, EXIT_USAGE, EXIT_DOWN = 0, 1, 2, 3


def common(parser: argparse.ArgumentParser, *, cwd: bool = True) -> argparse.ArgumentParser:
    """Flags every command takes: --json, and --cwd for project-scoped ones."""
    parser.add_argument("--json", action="store_true", help="machine-readable JSON output")
    if cwd:
        parser.add_argument("--cwd", default=None, help="project directory (default: the current directory)")
    return parser


def cwd_of(args: argparse.Namespace) -> str:
    return os.path.abspath(args.cwd or os.getcwd())


def settings_of(args: argparse.Namespace) -> Settings:
    return load_settings()


def client_of(args: argparse.Namespace, *, timeout: float = 10.0) -> MemorydClient:
    return MemorydClient.from_settings(settings_of(args), timeout=timeout)


def emit(args: argparse.Namespace, data: Any, human: Callable[[Any], str] | str | None = None) -> None:
    """Print JSON with --json, otherwise the human rendering."""
    if getattr(args, "json", False) or human is None:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    text = human(data) if callable(human) else human
    if text:
        print(text)


def when(iso: str | None) -> str:
    """An API timestamp as people read it: local time to the second (JSON output keeps ISO)."""
    if not iso:
        return "-"
    try:
        moment = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return str(iso)
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def fail(message: str, code: int = EXIT_API) -> int:
    print(f"memoryd: {message}", file=sys.stderr)
    return code


def run_command(args: argparse.Namespace) -> int:
    """Run `args.func(args)`; map errors to one clear line and an exit code."""
    try:
        result = args.func(args)
        return int(result or 0)
    except DaemonNotRunning as exc:
        return fail(str(exc), EXIT_DOWN)
    except ApiError as exc:
        return fail(exc.message, EXIT_API)
    except MemorydError as exc:
        return fail(exc.message, EXIT_USAGE)
    except KeyboardInterrupt:
        return 130
