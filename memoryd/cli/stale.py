"""`memoryd stale`: memories naming what the project no longer has (files, scripts, flags, ...)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.cli.output import EXIT_OK, client_of, common, cwd_of, emit


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        sub.add_parser("stale", help="memories that name files, scripts, flags or packages the project no longer has")
    )
    p.set_defaults(func=cmd_stale)


def _human(d: dict[str, Any]) -> str:
    if not d["checked"]:
        return "Not checked: the project is not a git repository (memoryd checks names against git ls-files)."
    if not d["memories"]:
        return "No stale memories: every file, script, flag, function and package they name is in the project."
    lines = [f"{len(d['memories'])} possibly stale memor{'y' if len(d['memories']) == 1 else 'ies'}:"]
    for m in d["memories"]:
        lines.append(f"  {m['filename']}  {m['name']}")
        lines += [f"      {r}" for r in m["reasons"]]
    lines.append("Update them (memoryd save with the same type and name) or remove them (memoryd forget FILE).")
    return "\n".join(lines)


def cmd_stale(args: argparse.Namespace) -> int:
    with client_of(args, timeout=60) as c:
        emit(args, c.request("GET", "/v1/stale", params={"cwd": cwd_of(args)}), _human)
    return EXIT_OK
