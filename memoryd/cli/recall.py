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
    p.add_argument(
        "--explain",
        action="store_true",
        help="also show why: each memory's score and what matched, those just under the cut",
    )
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


def _why_line(w: dict[str, Any]) -> str:
    """One memory's score and what it matched, as the recall log holds it."""
    parts = [f"score {w['score']:.2f}"]
    for label, key in (("words", "terms"), ("paths", "paths"), ("context", "context")):
        if w.get(key):
            parts.append(f"{label}: {', '.join(w[key])}")
    if w.get("dense") is not None:
        parts.append(f"similarity {w['dense']:.2f}")
    return f"{w['name'] or w['filename']} ({w['filename']}): " + "; ".join(parts)


def explain_text(entry: dict[str, Any]) -> str:
    """The recall log's entry for this recall: why each memory was given, which just missed, or why none was."""
    lines = [f"why ({entry['source']}, {entry['took_ms']:.1f} ms):"]
    lines += [f"  + {_why_line(w)}" for w in entry["injected"]]
    lines += [f"  - just under the cut: {_why_line(w)}" for w in entry["left_out"]]
    if not entry["injected"]:
        lines.append(f"  nothing given: {entry['reason'] or 'no memory matched the query'}")
    return "\n".join(lines)


def cmd_recall(args: argparse.Namespace) -> int:
    import secrets

    session = args.session or f"cli-{secrets.token_hex(6)}"
    with client_of(args, timeout=30.0) as client:
        data = client.recall(cwd_of(args), args.query, session)
        if args.explain:  # the session is this command's own (or the one named): its newest log entry is this recall
            entries = client.recall_log(session_id=session, limit=1)["entries"]
            data = {**data, "explain": entries[0] if entries else None}
    if args.explain and not args.json and not args.inject:
        print(_human(data))
        print(explain_text(data["explain"]) if data.get("explain") else "why: (not in the recall log)")
    elif args.inject and not args.json:
        print(data["injection"])
    else:
        emit(args, data, _human)
    return EXIT_OK
