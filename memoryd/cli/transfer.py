"""`memoryd import` and `memoryd export`: memories in and out of a project, through the daemon."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.cli.output import EXIT_API, EXIT_OK, client_of, common, cwd_of, emit, settings_of

if TYPE_CHECKING:
    from memoryd.client import MemorydClient
    from memoryd.integrations.transfer import Record


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        sub.add_parser(
            "import",
            help="import memories (a memory dir, another tool's Markdown notes, or an export); never overwrites",
        )
    )
    p.add_argument(
        "--from", dest="source", required=True, help="a memory dir, a .jsonl or a .tar.gz written by `memoryd export`"
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be imported; write nothing")
    p.set_defaults(func=cmd_import)

    p = common(sub.add_parser("export", help="write this project's memories as JSON lines (default) or a tarball"))
    p.add_argument(
        "--format",
        choices=["jsonl", "tar"],
        default="jsonl",
        help="jsonl (one memory a line) or tar (the files, gzipped)",
    )
    p.add_argument("--output", "-o", default="-", help="file to write ('-': stdout, jsonl only)")
    p.set_defaults(func=cmd_export)


def _existing(client: MemorydClient, cwd: str) -> list[dict[str, Any]]:
    return [client.get_memory(cwd, m["filename"]) for m in client.list_memories(cwd)["memories"]]


def _moving_to(args: argparse.Namespace, cwd: str, source: Path) -> tuple[Path, Path] | None:
    """(memoryd's own store, Claude Code's dir) when this import moves the project's pending own store
    (kept in service since ~/.claude appeared) into Claude Code's dir."""
    from memoryd.integrations.claude_memory import AUTO, claude_code_set_up, claude_memory_dir, pending_own_store

    settings = settings_of(args)
    if settings.memory.memory_base.strip() != AUTO or not claude_code_set_up(os.environ):
        return None
    own = pending_own_store(settings.home, cwd)
    if own is None or not source.is_dir() or source.resolve() != own.resolve():
        return None
    return own, claude_memory_dir(cwd, os.environ)


def cmd_import(args: argparse.Namespace) -> int:
    from memoryd.integrations.claude_memory import mark_moved
    from memoryd.integrations.transfer import Record, plan_import, read_source

    cwd = cwd_of(args)
    source = Path(args.source).expanduser()
    records, skipped = read_source(source)
    moving = _moving_to(args, cwd, source)
    with client_of(args) as client:
        if moving is not None:  # compared with where the project is going (memories already there count as imported)
            existing = read_source(moving[1])[0] if moving[1].is_dir() else []
            if not args.dry_run:
                mark_moved(*moving)  # first: from now on the daemon serves the project from Claude Code's dir
        else:
            existing = [
                Record(m["name"], m["description"], m["type"], m["body"], m["filename"]) for m in _existing(client, cwd)
            ]
        plan = plan_import(records, existing)
        rows = [p.as_dict() for p in plan]
        if not args.dry_run:
            for planned, row in zip(plan, rows):
                if planned.action == "save":
                    _save_new(client, cwd, planned.record, planned.name, row)
    rows += [{"source": s.source, "action": "invalid", "name": "", "type": "", "reason": s.reason} for s in skipped]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["action"]] = counts.get(row["action"], 0) + 1
    result = {"dry_run": args.dry_run, "source": args.source, "counts": counts, "memories": rows}
    lines = [
        f"{'would import' if args.dry_run else 'imported'} from {args.source}: "
        + (", ".join(f"{n} {a}" for a, n in sorted(counts.items())) or "nothing found")
    ]
    lines += [
        f"  {row['action']:<9} {row['source']}: {row['reason']}"
        if row["action"] == "invalid"
        else f"  {row['action']:<9} {row['source']} → {row['name']} "
        f"({row['type']}){': ' + row['reason'] if row['reason'] else ''}"
        for row in rows
    ]
    emit(args, result, "\n".join(lines))
    return EXIT_API if counts.get("refused") or counts.get("invalid") else EXIT_OK


def _save_new(client: MemorydClient, cwd: str, record: Record, name: str, row: dict[str, str]) -> None:
    """Save create-only (the daemon answers 409 rather than update a memory: issue 41's import overwrote
    one); a name found taken then is tried once as `<name> (imported)`, else reported as a conflict."""
    from memoryd.base.errors import ApiError
    from memoryd.integrations.transfer import IMPORTED_SUFFIX

    fields = {"cwd": cwd, "description": record.description, "type": record.type, "body": record.body, "only_new": True}
    names = [name] if name.endswith(IMPORTED_SUFFIX) else [name, name + IMPORTED_SUFFIX]
    for attempt in names:
        try:
            saved = client.request("POST", "/v1/memories", json={**fields, "name": attempt})
        except ApiError as exc:  # e.g. a secret: refused, nothing stored for it
            if exc.status == 409:
                row.update(action="conflict", name=attempt, reason=exc.message)
                continue
            row.update(action="refused", reason=exc.message)
            return
        row.update(action="saved", name=attempt, filename=saved["filename"])
        if attempt != name:
            row["reason"] = "name in use: saved under a new name"
        return


def cmd_export(args: argparse.Namespace) -> int:
    from memoryd.integrations.transfer import export_jsonl, export_tar

    cwd = cwd_of(args)
    with client_of(args) as client:
        memories = _existing(client, cwd)
        memory_dir = Path(client.index(cwd)["memory_dir"])
    if args.format == "jsonl":
        text = export_jsonl(memories)
        if args.output == "-":
            sys.stdout.write(text)
            return EXIT_OK
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        if args.output == "-":
            print("memoryd: --format tar needs --output FILE.tar.gz", file=sys.stderr)
            return 2
        files = {m["filename"]: (memory_dir / m["filename"]).read_text(encoding="utf-8") for m in memories}
        Path(args.output).write_bytes(export_tar(files))
    emit(
        args,
        {"output": args.output, "format": args.format, "memories": len(memories)},
        f"exported {len(memories)} memories to {args.output}",
    )
    return EXIT_OK
