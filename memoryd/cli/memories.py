"""save, list, show, forget, index, prompt."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memoryd.base import limits
from memoryd.cli.output import EXIT_OK, EXIT_USAGE, client_of, common, cwd_of, emit, fail, table, when

if TYPE_CHECKING:
    from memoryd.cli.results import ForgetResult


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(sub.add_parser("save", help="save (or update) a memory"))
    p.add_argument("--type", "-t", required=True, choices=limits.MEMORY_TYPES)
    p.add_argument("--name", "-n", required=True, help="short title; the same type+name updates that memory")
    p.add_argument("--description", "-d", required=True, help="one specific line that recall matches on")
    p.add_argument("--body", "-b", default=None, help="Markdown body ('-' or omitted with a pipe: read stdin)")
    p.add_argument("--team", action="store_true", help="save to team memory (shared by `memoryd team sync`)")
    p.add_argument(
        "--path",
        dest="applies_paths",
        action="append",
        metavar="GLOB",
        help="applies to files matching this glob (repeatable)",
    )
    p.add_argument(
        "--command",
        dest="applies_commands",
        action="append",
        metavar="CMD",
        help="applies to shell commands running this (repeatable)",
    )
    p.add_argument(
        "--tool",
        dest="applies_tools",
        action="append",
        metavar="TOOL",
        help="applies to this Claude Code tool only (repeatable)",
    )
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
        return fail(args, "no body: pass --body TEXT, or pipe the body on stdin (--body -).", EXIT_USAGE, "usage")
    applies = {
        k: getattr(args, f"applies_{k}") for k in ("paths", "commands", "tools") if getattr(args, f"applies_{k}")
    }
    with client_of(args) as client:
        if applies and not args.team:  # what the memory applies to (issue 38): the API takes it beside the fields
            fields = {"name": args.name, "description": args.description, "type": args.type, "body": body}
            saved = client.request(
                "POST", "/v1/memories", json={"cwd": str(cwd_of(args)), **fields, "applies_to": applies}
            )
        else:
            saved = client.save_memory(
                cwd_of(args), name=args.name, description=args.description, type_=args.type, body=body, team=args.team
            )
        # The API's `created` here is a flag; the CLI answers the memory as `show` does, plus `path` and `new`.
        memory = (
            client.get_memory(cwd_of(args), saved["filename"])
            if not args.team
            else {k: v for k, v in saved.items() if k not in ("created", "path", "origin")}
        )
    result = {**memory, "path": saved["path"], "new": bool(saved["created"])}
    emit(args, result, lambda r: f"{'saved' if r['new'] else 'updated'} {r['filename']} ({r['path']})")
    return EXIT_OK


def _human_list(data: dict[str, Any]) -> Any:
    rows = data["memories"]
    head = (
        (f"{len(rows)} memories" if len(rows) != 1 else "1 memory")
        if rows
        else "No memories saved yet for this project."
    )
    body = table(
        ["modified", "type", "file", "name — description"],
        [[when(m["mtime"])[:16], m["type"], m["filename"], f"{m['name']} — {m['description']}"] for m in rows],
        title=head,
        empty=head,
    )
    problems = [f"  problem: {bad['filename']}: {bad['error']}" for bad in data.get("invalid", [])]
    if not problems:
        return body
    if isinstance(body, str):
        return "\n".join([body, *problems])
    from rich.console import Group
    from rich.text import Text

    return Group(body, *(Text(p, style="yellow") for p in problems))


def cmd_list(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        emit(args, client.list_memories(cwd_of(args), args.type), _human_list)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        m = client.get_memory(cwd_of(args), args.filename)
    emit(
        args,
        m,
        lambda m: (
            f"# {m['name']}  [{m['type']}]\n{m['description']}\n(modified {when(m['modified'] or m['mtime'])})\n\n{m['body']}"
        ),
    )
    return EXIT_OK


def cmd_forget(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        client.delete_memory(cwd_of(args), args.filename, team=args.team)
    forgot: ForgetResult = {"deleted": args.filename}
    emit(args, forgot, f"forgot {args.filename}")
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
