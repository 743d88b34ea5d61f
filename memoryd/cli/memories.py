"""save, list, show, forget, index, prompt."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any

from memoryd import limits
from memoryd.cli.output import EXIT_OK, EXIT_USAGE, client_of, common, cwd_of, emit, fail


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(sub.add_parser("save", help="save (or update) a memory"))
    p.add_argument("--type", "-t", required=True, choices=limits.MEMORY_TYPES)
    p.add_argument("--name", "-n", required=True, help="short title; the same type+name updates that memory")
    p.add_argument("--description", "-d", required=True, help="one specific line that recall matches on")
    p.add_argument("--body", "-b", default=None, help="Markdown body ('-' or omitted with a pipe: read stdin)")
    p.add_argument("--team", action="store_true", help="save to team memory (shared by `memoryd team sync`)")
    p.set_defaults(func=cmd_save)

    p = common(sub.add_parser("list", help="list memories, newest first"))
    p.add_argument("--type", "-t", choices=limits.MEMORY_TYPES, default=None)
    p.set_defaults(func=cmd_list)

    p = common(sub.add_parser("show", help="print one memory"))
    p.add_argument("filename")
    p.set_defaults(func=cmd_show)

    p = common(sub.add_parser("forget", help="delete one memory"))
    p.add_argument("filename")
    p.add_argument("--team", action="store_true", help="delete a team memory (for everyone, at the next sync)")
    p.set_defaults(func=cmd_forget)

    p = common(sub.add_parser("index", help="print MEMORY.md as agents get it"))
    p.set_defaults(func=cmd_index)

    p = common(sub.add_parser("prompt", help="print the memory section for a system prompt"))
    p.set_defaults(func=cmd_prompt)


def cmd_save(args: argparse.Namespace) -> int:
    body = args.body
    if body == "-" or (body is None and not sys.stdin.isatty()):
        body = sys.stdin.read()
    if body is None:
        return fail("no body: pass --body TEXT, or pipe the body on stdin (--body -).", EXIT_USAGE)
    with client_of(args) as client:
        result = client.save_memory(cwd_of(args), name=args.name, description=args.description, type_=args.type, body=body, team=args.team)
    verb = "saved" if result.get("created") else "updated"
    emit(args, result, f"{verb} {result['filename']} ({result['path']})")
    return EXIT_OK


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _human_list(data: dict[str, Any]) -> str:
    rows = data["memories"]
    lines = [(f"{len(rows)} memories" if len(rows) != 1 else "1 memory") if rows else "No memories saved yet for this project."]
    for m in rows:
        lines.append(f"  {_when(m['mtime'])}  [{m['type']}] {m['filename']}  {m['name']} — {m['description']}")
    for bad in data.get("invalid", []):
        lines.append(f"  problem: {bad['filename']}: {bad['error']}")
    return "\n".join(lines)


def cmd_list(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        emit(args, client.list_memories(cwd_of(args), args.type), _human_list)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        m = client.get_memory(cwd_of(args), args.filename)
    emit(args, m, lambda m: f"# {m['name']}  [{m['type']}]\n{m['description']}\n(modified {m['modified'] or _when(m['mtime'])})\n\n{m['body']}")
    return EXIT_OK


def cmd_forget(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        client.delete_memory(cwd_of(args), args.filename, team=args.team)
    emit(args, {"deleted": args.filename}, f"forgot {args.filename}")
    return EXIT_OK


def cmd_index(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        data = client.index(cwd_of(args))
    emit(args, data, lambda d: d["content"].rstrip() or f"(no memories yet in {d['memory_dir']})")
    return EXIT_OK


def cmd_prompt(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        data = client.prompt(cwd_of(args))
    emit(args, data, lambda d: d["text"].rstrip())
    return EXIT_OK
