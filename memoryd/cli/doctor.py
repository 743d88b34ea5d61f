"""`memoryd doctor`: check the install end to end, with a fix for each problem; exit 1 on any failure."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from memoryd.cli.output import EXIT_FAIL, EXIT_OK, client_of, common, cwd_of, emit, mark, settings_of, styled

if TYPE_CHECKING:
    from memoryd.cli.results import DoctorResult


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        sub.add_parser(
            "doctor", help="check daemon, token, service, hooks, memory dir, transcript roots, LLM, grep, disk"
        )
    )
    p.set_defaults(func=cmd_doctor)


def _human(d: dict[str, Any]) -> Any:
    verdict = "all good" if d["ok"] else f"{sum(not c['ok'] for c in d['checks'])} check(s) failed"
    if not styled():
        lines = [
            f"{'ok  ' if c['ok'] else 'FAIL'}  {c['name']}: {c['detail']}"
            + (f"\n      fix: {c['fix']}" if c["fix"] else "")
            for c in d["checks"]
        ]
        return "\n".join(lines + ["", verdict])
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table(box=None, pad_edge=False, header_style="bold cyan")
    t.add_column("")
    t.add_column("check", max_width=28, overflow="fold")
    t.add_column("detail", overflow="fold", ratio=1)
    for c in d["checks"]:
        detail = Text(c["detail"])
        if c["fix"]:
            detail.append(f"\nfix: {c['fix']}", style="yellow")
        t.add_row(mark(c["ok"]), Text(c["name"]), detail)
    return Group(t, Text(""), Text(verdict, style="green" if d["ok"] else "bold red"))


def cmd_doctor(args: argparse.Namespace) -> int:
    from memoryd.cli.doctor_checks import run_checks

    with client_of(args, timeout=3) as client:
        checks = run_checks(settings_of(args), client, cwd_of(args))
    data: DoctorResult = {"ok": all(c.ok for c in checks), "checks": [c.as_dict() for c in checks]}
    emit(args, data, _human)
    return EXIT_OK if data["ok"] else EXIT_FAIL
