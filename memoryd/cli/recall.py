"""`memoryd recall "query" [--session ID]`: what recall would inject, and why."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.cli.output import EXIT_OK, client_of, common, cwd_of, emit


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(sub.add_parser("recall", help="show the memories recall picks for a query"))
    p.add_argument("query", help="the prompt to recall for")
    p.add_argument("--session", default=None, help="session id (default: a fresh one, so nothing counts as surfaced)")
    p.add_argument("--inject", action="store_true", help="print the injection text instead of the summary")
    p.set_defaults(func=cmd_recall)


def _human(data: dict[str, Any]) -> str:
    memories = data["memories"]
    head = f"method: {data['method']}"
    if data.get("reason"):
        head += f" ({data['reason']})"
    lines = [head, f"session budget used: {data['budget_used_bytes']:,} bytes"]
    if not memories:
        lines.append("No memories recalled.")
    scores = data.get("scores") or {}
    for i, m in enumerate(memories, 1):
        score = f"  score {scores[m['filename']]:.2f}" if m["filename"] in scores else ""
        team = f"  team, by {m.get('author') or 'a member'}" if m.get("origin") == "team" else ""
        lines.append(f"{i}. [{m['type']}] {m['filename']}{score}  ({m['age_days']} days old){team}")
        lines.append(f"   {m['name']} — {m['description']}")
    return "\n".join(lines)


def cmd_recall(args: argparse.Namespace) -> int:
    import secrets

    session = args.session or f"cli-{secrets.token_hex(6)}"
    with client_of(args, timeout=30.0) as client:
        data = client.recall(cwd_of(args), args.query, session)
    if args.inject and not args.json:
        print(data["injection"])
    else:
        emit(args, data, _human)
    return EXIT_OK
