"""`memoryd config`, `memoryd logs`, `memoryd completion`: find your way around an install."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from memoryd.cli.output import EXIT_OK, EXIT_USAGE, common, emit, fail, table

if TYPE_CHECKING:
    from memoryd.cli.results import ConfigInitResult, ConfigResult, ConfigSetting

SHELLS = ("bash", "zsh", "fish")
LOG_FOLLOW_POLL_SECONDS = 0.25


def _parser(sub: argparse._SubParsersAction, name: str, help: str, example: str) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=help[0].upper() + help[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        _parser(
            sub,
            "config",
            "show the config file's path and every effective setting with where it came from",
            "memoryd config            # then: memoryd config init",
        ),
        cwd=False,
    )
    p.set_defaults(func=cmd_config)
    actions = p.add_subparsers(dest="config_action", metavar="ACTION")
    init = common(
        actions.add_parser(
            "init",
            help="write the commented example config (every setting, its default, what it does)",
            description="Write the commented example config to $MEMORYD_HOME/config.toml; never overwrites a file.",
            epilog="example:\n  memoryd config init && $EDITOR ~/.memoryd/config.toml",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        ),
        cwd=False,
    )
    init.add_argument(
        "--print", dest="to_stdout", action="store_true", help="print it on stdout instead of writing the file"
    )
    init.set_defaults(func=cmd_config_init)

    p = _parser(
        sub,
        "logs",
        "print the daemon's log (its path: `memoryd status`)",
        "memoryd logs -f        # follow it, like tail -f",
    )
    p.add_argument("-n", "--lines", type=int, default=50, help="how many of the last lines to print (default 50)")
    p.add_argument(
        "-f", "--follow", action="store_true", help="keep printing lines as the daemon writes them (Ctrl-C stops)"
    )
    p.set_defaults(func=cmd_logs)

    p = _parser(
        sub,
        "completion",
        "print the shell completion script for bash, zsh or fish",
        "memoryd completion bash > ~/.local/share/bash-completion/completions/memoryd",
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=cmd_completion)


LLM_ENV = "MEMORYD_LLM"


def with_env_rules(rows: list[dict[str, Any]], env: Mapping[str, str]) -> list[dict[str, Any]]:
    """MEMORYD_LLM rules over `[llm] enabled` and `backend` whatever the file says: show the value in force, and
    that the variable set it (a row saying `llm.enabled true` while MEMORYD_LLM=off made memoryd run offline)."""
    from memoryd.config_sources import load_settings

    if not env.get(LLM_ENV):
        return rows
    settings = load_settings(env)
    ruled = {"llm.enabled": not settings.llm_forced_off, "llm.backend": settings.llm_backend}
    out = []
    for row in rows:
        value = ruled.get(row["setting"], row["value"])
        if row["setting"] in ruled and value != row["value"]:
            row = {**row, "value": value, "source": f"env {LLM_ENV}={env[LLM_ENV]} (overrides {row['source']})"}
        out.append(row)
    return out


def cmd_config(args: argparse.Namespace) -> int:
    from memoryd.client import home_from_env
    from memoryd.config import CONFIG_FILENAME
    from memoryd.config_sources import setting_sources

    path = home_from_env() / CONFIG_FILENAME
    rows = with_env_rules(setting_sources(), os.environ)
    settings = cast("list[ConfigSetting]", rows)  # its rows are {setting, value, source}
    data: ConfigResult = {"path": str(path), "exists": path.is_file(), "settings": settings}

    def human(d: dict[str, Any]) -> Any:
        head = f"config file: {d['path']}" + (
            "" if d["exists"] else " (does not exist: every setting is its default; `memoryd config init` writes one)"
        )
        from rich.console import Group
        from rich.text import Text

        body = table(
            ["setting", "value", "from"],
            [[r["setting"], json.dumps(r["value"], ensure_ascii=False), r["source"]] for r in d["settings"]],
        )
        return Group(Text(head), Text(""), body) if not isinstance(body, str) else f"{head}\n\n{body}"

    emit(args, data, human)
    return EXIT_OK


def cmd_config_init(args: argparse.Namespace) -> int:
    from memoryd.base.files import atomic_write
    from memoryd.client import home_from_env
    from memoryd.config import CONFIG_FILENAME
    from memoryd.config_sources import example_config

    text = example_config()
    if args.to_stdout:
        sys.stdout.write(text)
        return EXIT_OK
    home = home_from_env()
    path = home / CONFIG_FILENAME
    if path.exists():
        return fail(
            args,
            f"{path} exists; nothing was changed. `memoryd config init --print` shows the example to copy from.",
            EXIT_USAGE,
            "exists",
        )
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(path, text)
    written: ConfigInitResult = {"path": str(path), "written": True}
    emit(args, written, f"wrote {path} (every setting commented with its default; restart the daemon after editing)")
    return EXIT_OK


def log_file(home: Path) -> Path:
    from memoryd.base import limits

    return home / limits.LOG_DIRNAME / limits.LOG_FILENAME


def _tail(f: BinaryIO, lines: int) -> list[str]:
    """The last `lines` lines of an open file; leaves it positioned at the end it read to."""
    end = f.seek(0, os.SEEK_END)
    start, block, data = end, 64 * 1024, b""
    while start > 0 and data.count(b"\n") <= lines:
        step = min(block, start)
        start -= step
        f.seek(start)
        data = f.read(step) + data
    f.seek(end)
    return data.decode("utf-8", "replace").splitlines()[-lines:] if lines > 0 else []


def cmd_logs(args: argparse.Namespace) -> int:
    from memoryd.client import home_from_env

    path = log_file(home_from_env())
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return fail(
            args,
            f"no log yet at {path}: the daemon writes it from its first start (memoryd serve, or memoryd setup).",
            code="no_log",
        )
    with f:
        for line in _tail(f, args.lines):
            print(line)
        sys.stdout.flush()
        if args.follow:
            _follow(f, path)
    return EXIT_OK


def _follow(f: BinaryIO, path: Path) -> None:
    """Print what is appended from here on, into the next file when the daemon rotates the log; Ctrl-C ends it."""
    inode = os.fstat(f.fileno()).st_ino
    while True:
        chunk = f.read()
        if chunk:
            sys.stdout.write(chunk.decode("utf-8", "replace"))
            sys.stdout.flush()
            continue
        try:
            rotated = path.stat().st_ino != inode
        except FileNotFoundError:
            rotated = False
        if rotated:
            with path.open("rb") as new:
                _follow(new, path)
            return
        time.sleep(LOG_FOLLOW_POLL_SECONDS)


def cmd_completion(args: argparse.Namespace) -> int:
    import shtab

    print(shtab.complete(args.root_parser, shell=args.shell))
    return EXIT_OK
