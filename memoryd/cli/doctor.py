"""`memoryd doctor`: check the install end to end, with a fix for each problem."""

from __future__ import annotations

import argparse

from memoryd.cli.output import EXIT_FAIL, EXIT_OK, client_of, common, cwd_of, emit, settings_of


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(sub.add_parser("doctor", help="check daemon, token, service, hooks, memory dir, transcript roots, LLM, grep, disk"))
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from memoryd.doctor import run_checks

    with client_of(args, timeout=3) as client:
        checks = run_checks(settings_of(args), client, cwd_of(args))
    data = {"ok": all(c.ok for c in checks), "checks": [c.as_dict() for c in checks]}

    def human(d: dict) -> str:  # type: ignore[type-arg]
        lines = [f"{'ok  ' if c['ok'] else 'FAIL'}  {c['name']}: {c['detail']}" + (f"\n      fix: {c['fix']}" if c["fix"] else "") for c in d["checks"]]
        return "\n".join(lines + ["", "all good" if d["ok"] else "some checks failed"])

    emit(args, data, human)
    return 0 if data["ok"] else 1
