"""`memoryd guard`: the memories of this project that hold an agent's acts, what each stops and what to do
instead, and any whose `forbid:` does not parse (docs/guard.md)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.cli.output import EXIT_OK, client_of, common, cwd_of, emit


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(sub.add_parser("guard", help="the memories that hold acts in this project (their forbid: triggers)"))
    p.set_defaults(func=cmd_guard)


def _human(d: dict[str, Any]) -> str:
    rules, broken = d["rules"], d["broken"]
    if not rules and not broken:
        return (
            f"No memory holds acts in {d['memory_dir']}. A memory's `forbid:` names the commands, files and imports "
            "it stops (docs/guard.md); `memoryd save` proposes one from a rule like 'use pnpm, never npm'."
        )
    noun = "memory holds" if len(rules) == 1 else "memories hold"
    lines = [f"{len(rules)} {noun} acts in {d['memory_dir']} (mode {d['mode']}):"]
    for r in rules:
        enforce = f" [{r['forbid']['enforce']}]" if r["forbid"].get("enforce") else ""
        lines += [f"  {r['filename']}  {r['name']}{enforce}", f"      {r['will_stop']}"]
    for b in broken:
        lines += [f"  {b['filename']}  holds nothing: {b['error']}"]
    lines.append("Change or drop a rule: edit or remove `forbid:` in its file (or on its page in `memoryd ui`).")
    return "\n".join(lines)


def cmd_guard(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        emit(args, c.request("GET", "/v1/guard", params={"cwd": cwd_of(args)}), _human)
    return EXIT_OK
