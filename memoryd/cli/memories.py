"""save, list, show, forget, index, prompt."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memoryd.base import limits
from memoryd.base.errors import MemorydError, MemoryNotFound
from memoryd.cli.output import EXIT_OK, EXIT_USAGE, client_of, common, cwd_of, emit, fail, table, when

if TYPE_CHECKING:
    from memoryd.cli.results import ForgetResult
    from memoryd.client import MemorydClient


def _global_flag(p: argparse.ArgumentParser, help: str) -> None:
    """`--global`: the user's own store ($MEMORYD_HOME/global/), listed and recalled in every project."""
    p.add_argument("--global", dest="scope", action="store_const", const="global", default="project", help=help)


MEMORY_ARG = 'its file name (as `memoryd list` shows it), or its name, in any case: "Package manager"'


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(sub.add_parser("save", help="save (or update) a memory"))
    p.add_argument("--type", "-t", required=True, choices=limits.MEMORY_TYPES)
    p.add_argument("--name", "-n", required=True, help="short title; the same type+name updates that memory")
    p.add_argument("--description", "-d", required=True, help="one specific line that recall matches on")
    p.add_argument("--body", "-b", default=None, help="Markdown body ('-' or omitted with a pipe: read stdin)")
    p.add_argument("--team", action="store_true", help="save to team memory (shared by `memoryd team sync`)")
    _global_flag(
        p, "keep it in your own store ($MEMORYD_HOME/global/): listed and recalled in every project, never shared"
    )
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
    _global_flag(p, "only your global memories (without it: this project's, then your global ones)")
    p.set_defaults(func=cmd_list)

    p = common(sub.add_parser("show", help="print one memory"))
    p.add_argument("memory", metavar="MEMORY", help=MEMORY_ARG)
    _global_flag(p, "a global memory (`memoryd list --global` names them)")
    p.set_defaults(func=cmd_show)

    p = common(sub.add_parser("forget", help="delete one memory"))
    p.add_argument("memory", metavar="MEMORY", help=MEMORY_ARG)
    p.add_argument("--team", action="store_true", help="delete a team memory (for everyone, at the next sync)")
    _global_flag(p, "delete one of your global memories (from every project)")
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
        if args.team and args.scope == "global":
            return fail(
                args, "--team and --global exclude each other: a global memory is never shared.", EXIT_USAGE, "usage"
            )
        saved = client.save_memory(
            cwd_of(args),
            name=args.name,
            description=args.description,
            type_=args.type,
            body=body,
            team=args.team,
            scope=args.scope,
            applies_to=applies if applies and not args.team else None,
        )
        # The API's `created` here is a flag; the CLI answers the memory as `show` does, plus `path` and `new`.
        memory = (
            client.get_memory(cwd_of(args), saved["filename"], scope=args.scope)
            if not args.team
            else {k: v for k, v in saved.items() if k not in ("created", "path", "origin")}
        )
    result = {**memory, "path": saved["path"], "new": bool(saved["created"]), "will_stop": saved.get("will_stop", "")}
    if saved.get("reaches"):
        result["reaches"] = saved["reaches"]
    emit(args, result, _human_saved)
    return EXIT_OK


def _human_saved(r: dict[str, Any]) -> str:
    """The saved file, the acts its memory reaches (or how to give it some), and what the guard now holds for it."""
    from memoryd.relevance.applies import REACHES_NO_ACT

    line = f"{'saved' if r['new'] else 'updated'} {r['filename']} ({r['path']})"
    if r.get("reaches") and not (r.get("will_stop") and r["reaches"] == REACHES_NO_ACT):  # the guard's line says it
        line += f"\nreaches: {r['reaches']}"
    if r.get("will_stop"):
        line += f"\n{r['will_stop']} (the guard holds these acts; edit or remove `forbid:` in the file to change it)"
    return line


def _type_of(memory: dict[str, Any]) -> str:
    """The type column; a global memory is marked as one (it is listed in every project)."""
    return f"{memory['type']} (global)" if memory.get("scope") == "global" else str(memory["type"])


def _human_list(data: dict[str, Any]) -> Any:
    rows = data["memories"]
    head = (
        (f"{len(rows)} memories" if len(rows) != 1 else "1 memory")
        if rows
        else "No memories saved yet for this project."
    )
    body = table(
        ["modified", "type", "file", "name — description"],
        [[when(m["mtime"])[:16], _type_of(m), m["filename"], f"{m['name']} — {m['description']}"] for m in rows],
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
    """This project's memories, then the user's global ones marked "(global)"; `--global`: only those.
    With --json, the one page the API answers (this project's, or with --global the global ones)."""
    human = not getattr(args, "json", False)
    with client_of(args) as client:
        data = client.list_memories(cwd_of(args), args.type, scope=args.scope)
        if human and args.scope == "project":  # the global ones follow, in every project
            mine = client.list_memories(cwd_of(args), args.type, scope="global")
            data["memories"] += [{**m, "scope": "global"} for m in mine["memories"]]
            data["invalid"] += mine.get("invalid", [])
        elif human:
            data["memories"] = [{**m, "scope": "global"} for m in data["memories"]]
    emit(args, data, _human_list)
    return EXIT_OK


def _resolve(client: MemorydClient, args: argparse.Namespace, resolve: Any) -> tuple[str, str]:
    """(scope, file name) of the memory `args.memory` names: in the asked scope, else (for a project) among the
    user's global memories, as `list` shows both."""
    try:
        return args.scope, resolve(args.memory, client.list_memories(cwd_of(args), scope=args.scope))
    except MemoryNotFound:
        if args.scope != "project":
            raise
        try:
            return "global", resolve(args.memory, client.list_memories(cwd_of(args), scope="global"))
        except MemorydError:
            pass
        raise


def cmd_show(args: argparse.Namespace) -> int:
    from memoryd.cli.names import resolve

    with client_of(args) as client:
        scope, filename = _resolve(client, args, resolve)
        m = client.get_memory(cwd_of(args), filename, scope=scope)
    kind = f"{m['type']}, global" if scope == "global" else m["type"]
    emit(
        args,
        m,
        lambda m: (
            f"# {m['name']}  [{kind}]\n{m['description']}\n(modified "
            f"{when(m['modified'] or m['mtime'])})\n\n{m['body']}"
        ),
    )
    return EXIT_OK


def cmd_forget(args: argparse.Namespace) -> int:
    from memoryd.cli.names import resolve

    with client_of(args) as client:
        if args.team:
            scope, filename = "project", resolve(args.memory, client.team_memories(cwd_of(args)))
        else:
            scope, filename = _resolve(client, args, resolve)
        if scope != args.scope:
            return fail(
                args,
                f"{filename} is one of your global memories (in every project), not this project's: "
                f"`memoryd forget --global {filename}` deletes it everywhere.",
                code="memory_not_found",
            )
        client.delete_memory(cwd_of(args), filename, team=args.team, scope=scope)
    forgot: ForgetResult = {"deleted": filename}
    emit(args, forgot, f"forgot {filename}")
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
