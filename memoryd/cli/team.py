"""`memoryd team init|sync|status|list`: the project's team memory, shared through git."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from memoryd.base import limits
from memoryd.cli.output import EXIT_OK, client_of, common, cwd_of, emit


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    team = sub.add_parser("team", help="share memory with your team through a git remote")
    tsub = team.add_subparsers(dest="team_command", metavar="SUBCOMMAND", required=True)

    p = common(tsub.add_parser("init", help="tie this project's team memory to a git remote"))
    p.add_argument("--remote", required=True, help="git URL or path of a repository the team can reach")
    p.add_argument(
        "--branch",
        default=limits.TEAM_DEFAULT_BRANCH,
        help=f"branch that holds the memories (default: {limits.TEAM_DEFAULT_BRANCH})",
    )
    p.set_defaults(func=cmd_init)

    p = common(tsub.add_parser("sync", help="pull, merge and push team memory now"))
    p.add_argument(
        "--accept-rewrite", action="store_true", help="merge with a remote whose history was rewritten (force-pushed)"
    )
    p.set_defaults(func=cmd_sync)

    p = common(tsub.add_parser("status", help="remote, ahead/behind, last sync, errors and limits"))
    p.set_defaults(func=cmd_status)

    p = common(tsub.add_parser("list", help="team memories with who changed each last"))
    p.set_defaults(func=cmd_list)


def _ts(value: float | None) -> str:
    return datetime.fromtimestamp(value).strftime("%Y-%m-%d %H:%M:%S") if value else "never"


def _report_lines(r: dict[str, Any]) -> list[str]:
    lines = []
    for key, label in (
        ("pulled", "pulled"),
        ("removed", "deleted by a member"),
        ("pushed", "pushed"),
        ("merged", "merged"),
        ("conflicts", "both versions kept for review"),
        ("entries_capped", "not pushed, entry cap reached (entries_capped)"),
        ("kept_local", "kept as edited here"),
    ):
        if r.get(key):
            lines.append(f"  {label}: {', '.join(r[key])}")
    for reason, files in (r.get("push_suppressed") or {}).items():
        lines.append(f"  not pushed, {reason} limit (push_suppressed): {', '.join(files)}")
    for item in r.get("invalid") or []:
        lines.append(f"  not written here, invalid (invalid): {item['filename']}: {item['reason']}")
    for item in r.get("secret_skipped") or []:
        lines.append(
            f"  not pushed, holds a secret (secret_skipped): {item['filename']}: {'; '.join(item['findings'])}"
        )
    return lines or ["  nothing to do: in step with the remote"]


def _status_lines(s: dict[str, Any]) -> list[str]:
    lim = s["limits"]
    lines = [
        f"team folder: {s['team_dir']}",
        f"remote: {s['remote']} (branch {s['branch']}), signed as {s['author']}",
        f"entries: {s['entries']} of {lim['max_entries']}; ahead {s['ahead']} file(s), behind {s['behind']} commit(s)",
        f"last sync: {_ts(s['last_sync'])}; pushes this hour: {lim['pushes_last_hour']} of "
        f"{lim['max_pushes_per_hour']}; "
        f"push size limit {lim['max_push_bytes']:,} bytes",
    ]
    if s["needs_review"]:
        lines.append(f"needs review (both versions kept after concurrent edits): {', '.join(s['needs_review'])}")
    if s["remote_rewritten"]:
        lines.append(
            "REMOTE REWRITTEN: the branch was force-pushed; run `memoryd team sync --accept-rewrite` after checking "
            "with your team"
        )
    if s["last_error"]:
        retry = f" (retry at {_ts(s['next_retry'])})" if s.get("next_retry") else ""
        lines.append(f"last error: {s['last_error']}{retry}")
    return lines


def cmd_init(args: argparse.Namespace) -> int:
    with client_of(args, timeout=120.0) as client:
        data = client.team_init(cwd_of(args), args.remote, args.branch)
    sync = (
        ["first sync:", *_report_lines(data["sync"])]
        if data["sync"]
        else [f"first sync failed (retried later): {data['sync_error']}"]
    )
    emit(args, data, lambda d: "\n".join([*_status_lines(d), *sync]))
    return EXIT_OK


def cmd_sync(args: argparse.Namespace) -> int:
    with client_of(args, timeout=120.0) as client:
        data = client.team_sync(cwd_of(args), accept_rewrite=args.accept_rewrite)
    emit(args, data, lambda d: "\n".join(["synced:", *_report_lines(d)]))
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        emit(args, client.team_status(cwd_of(args)), lambda d: "\n".join(_status_lines(d)))
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        data = client.team_memories(cwd_of(args))
    rows = [
        f"  [{m['type']}] {m['filename']}  {m['name']} — {m['description']}  (by {m['author']})"
        for m in data["memories"]
    ]
    emit(args, data, lambda d: "\n".join([f"{len(rows)} team memories in {d['team_dir']}", *rows]))
    return EXIT_OK
