"""`memoryd dream status|run|cancel|runs|undo`."""

from __future__ import annotations

import argparse
import time
from typing import Any

from memoryd.cli.output import EXIT_OK, client_of, common, cwd_of, emit, when


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("dream", help="Auto-Dream consolidation: status, run, cancel, runs, undo")
    dsub = p.add_subparsers(dest="dream_command", metavar="ACTION", required=True)
    common(dsub.add_parser("status", help="gates, last run, running task")).set_defaults(func=cmd_status)
    r = common(dsub.add_parser("run", help="consolidate now (skips gates 1-3, never the lock)"))
    r.add_argument("--wait", action="store_true", help="wait for the run to finish and print what it changed")
    r.set_defaults(func=cmd_run)
    common(dsub.add_parser("cancel", help="cancel the running consolidation")).set_defaults(func=cmd_cancel)
    common(dsub.add_parser("runs", help="past runs and what they changed")).set_defaults(func=cmd_runs)
    u = common(dsub.add_parser("undo", help="restore the files a run changed"))
    u.add_argument("run_id")
    u.set_defaults(func=cmd_undo)


def _human_status(s: dict[str, Any]) -> str:
    lines = [f"memory dir: {s['memory_dir']}"]
    for g in s["gates"]:
        lines.append(f"  {'open  ' if g['passes'] else 'closed'} {g['name']}: {g['value']} (needs {g['threshold']}) — {g['detail']}")
    if s.get("running"):
        lines.append(f"running: {s['running']['run_id']} phase {s['running']['phase']}, {len(s['running']['files_touched'])} file(s) touched")
    if s.get("last_run"):
        lr = s["last_run"]
        lines.append(f"last run: {lr['run_id']} {lr['status']} at {when(lr['finished_at'] or lr['started_at'])} ({len(lr['changes'])} change(s))")
    if s.get("next_check"):
        lines.append(f"next check: {when(s['next_check'])}")
    return "\n".join(lines)


def _human_run(r: dict[str, Any]) -> str:
    lines = [f"{r['run_id']}  {r['status']}  {r['method'] or ''}  started {when(r['started_at'])}" + ("  (undone)" if r.get("undone_at") else "")]
    lines += [f"    {c['op']:6} {c['filename']}  {c.get('why', '')}" for c in r["changes"]]
    lines += [f"    note: {n}" for n in r.get("notes", [])]
    if r.get("error"):
        lines.append(f"    error: {r['error']}")
    return "\n".join(lines)


def cmd_status(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        emit(args, c.request("GET", "/v1/dream/status", params={"cwd": cwd_of(args)}), _human_status)
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        run_id = c.request("POST", "/v1/dream/run", json={"cwd": cwd_of(args)})["run_id"]
        if not args.wait:
            emit(args, {"run_id": run_id}, f"started {run_id}; see `memoryd dream status`")
            return EXIT_OK
        while True:
            runs = c.request("GET", "/v1/dream/runs", params={"cwd": cwd_of(args)})["runs"]
            run = next((r for r in runs if r["run_id"] == run_id), None)
            if run and run["status"] != "running":
                emit(args, run, _human_run)
                return EXIT_OK
            time.sleep(0.2)


def cmd_cancel(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        result = c.request("POST", "/v1/dream/cancel", json={"cwd": cwd_of(args)})
    emit(args, result, lambda r: f"cancelled {r['run_id']}; its changes were restored and the lock rolled back" if r["cancelled"] else r["message"])
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        runs = c.request("GET", "/v1/dream/runs", params={"cwd": cwd_of(args)})["runs"]
    emit(args, {"runs": runs}, lambda d: "\n".join(_human_run(r) for r in d["runs"]) or "no consolidation has run for this project yet")
    return EXIT_OK


def cmd_undo(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        result = c.request("POST", f"/v1/dream/runs/{args.run_id}/undo")
    emit(args, result, lambda r: f"restored {len(r['restored'])} file(s): {', '.join(r['restored'])}")
    return EXIT_OK
