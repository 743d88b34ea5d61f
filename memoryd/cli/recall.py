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
        help="also show why: each memory's score, the words it matched and the rule and threshold that "
        "gave it, and why the next best were left out",
    )
    p.set_defaults(func=cmd_recall)


def _human(data: dict[str, Any]) -> str:
    memories = data["memories"]
    head = f"method: {data['method']}"
    if data.get("reason"):
        head += f" ({data['reason']})"
    lines = [head]
    if data["budget_used_bytes"]:
        lines.append(f"this session has been given {data['budget_used_bytes']:,} bytes of memories so far")
    if not memories:
        lines.append("No memories recalled.")
    scores = data.get("scores") or {}
    for i, m in enumerate(memories, 1):
        score = f"  score {scores[m['filename']]:.2f}" if scores.get(m["filename"]) else ""  # 0: a rule, not a rank
        team = f"  team, by {m.get('author') or 'a member'}" if m.get("origin") == "team" else ""
        lines.append(f"{i}. [{m['type']}] {m['filename']}{score}  ({m['age_days']} days old){team}")
        lines.append(f"   {m['name']} — {m['description']}")
    return "\n".join(lines)


def _why_line(w: dict[str, Any]) -> str:
    """One memory's score and what it matched (the prompt's words as typed), as the recall log holds it."""
    parts = [f"score {w['score']:.2f}"] if w["score"] else []  # 0: given by a rule at a tool call, never ranked
    for label, key in (("words", "terms"), ("paths", "paths"), ("context", "context")):
        if w.get(key):
            parts.append(f"{label}: {', '.join(w[key])}")
    if w.get("dense") is not None:
        parts.append(f"similarity {w['dense']:.2f}")
    return f"{w['name'] or w['filename']} ({w['filename']}): " + "; ".join(parts)


def _covers(w: dict[str, Any]) -> str:
    """ "'npm' covers 40 %, needs 35 %": the close-match rule's sum for this memory."""
    said = ", ".join(f"'{t}'" for t in w.get("terms") or ()) or "its words"
    verb = "cover" if len(w.get("terms") or ()) > 1 else "covers"
    return f"{said} {verb} {w['cover'] * 100:.0f} %, needs {w['cover_needed'] * 100:.0f} %"


def decided_by(w: dict[str, Any]) -> str:
    """The rule and threshold that gave this memory, or kept it out."""
    rule, sure, floor = w.get("rule") or "", w.get("confidence"), w.get("confidence_min")
    has_cover = w.get("cover") is not None and w.get("cover_needed") is not None
    if w["injected"]:
        if rule == "close match" and has_cover:
            reached = "" if w["cover"] >= w["cover_needed"] else " (another of the best memories reaches it)"
            return f"close match: {_covers(w)}{reached}"
        if rule == "confident" and sure is not None and floor is not None:
            return f"confident: confidence {sure:.3f} ≥ {floor:g}"
        return f"rule: {rule}" if rule else ""
    if rule:  # the service's own reason, e.g. "did not fit the context cap"
        return rule
    if not (w.get("terms") or w.get("paths") or w.get("context")):
        return "holds no informative word of the prompt or its context"
    if sure is not None and floor is not None and sure < floor:
        return f"confidence {sure:.3f} < {floor:g}" + (
            f"; not a close match ({_covers(w)})" if has_cover and w["cover"] < w["cover_needed"] else ""
        )
    if has_cover and w["cover"] < w["cover_needed"]:
        return f"not a close match: {_covers(w)}"
    return "ranked below the memories given"


def explain_text(entry: dict[str, Any]) -> str:
    """The recall log's entry for this recall: why each memory was given, why each of the next best
    was not (the rule and its threshold), or why none was."""
    lines = [f"why ({entry['source']}, {entry['took_ms']:.1f} ms):"]
    for w in entry["injected"]:
        rule = decided_by(w)
        lines.append(f"  + {_why_line(w)}" + (f" — {rule}" if rule else ""))
    lowest = min((w["score"] for w in entry["injected"]), default=None)
    for w in entry["left_out"]:
        where = (
            "left out"
            if lowest is None
            else "just under the cut"
            if w["score"] <= lowest
            else "left out, above one given"
        )
        lines.append(f"  - {where}: {_why_line(w)} — {decided_by(w)}")
    if not entry["injected"]:
        lines.append(f"  nothing given: {entry['reason'] or 'no memory matched the query'}")
    return "\n".join(lines)


def cmd_recall(args: argparse.Namespace) -> int:
    import secrets

    session = args.session or f"cli-{secrets.token_hex(6)}"
    with client_of(args, timeout=30.0) as client:
        data = client.recall(cwd_of(args), args.query, session, source="cli")
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
