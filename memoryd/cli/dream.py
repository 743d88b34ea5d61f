"""`memoryd dream status|run|cancel|runs|undo`."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from memoryd.cli.output import EXIT_OK, client_of, common, cwd_of, emit, mark, table, when

if TYPE_CHECKING:
    from memoryd.cli.results import GateResult, GateUnit

# The unit of each gate's value and threshold (numbers, or null: never consolidated, never scanned, lock free).
GATE_UNITS: dict[str, GateUnit] = {"time": "hours", "scan_throttle": "seconds", "sessions": "sessions", "lock": "pid"}


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


def _number(value: Any) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def typed_gate(g: dict[str, Any]) -> GateResult:
    """A gate with typed values: `value` and `threshold` are numbers or null, `unit` names them."""
    return {
        "name": g["name"],
        "passes": bool(g["passes"]),
        "value": _number(g["value"]),
        "threshold": _number(g["threshold"]),
        "unit": GATE_UNITS.get(g["name"], ""),
        "detail": g["detail"],
    }


def _gate_value(g: dict[str, Any]) -> str:
    if g["value"] is None:
        return {"time": "never consolidated", "scan_throttle": "never scanned", "lock": "free"}.get(g["name"], "-")
    return f"{g['value']:g} {g['unit']}" if g["unit"] != "pid" else f"held by pid {g['value']}"


def _human_status(s: dict[str, Any]) -> Any:
    lines = [f"memory dir: {s['memory_dir']}"]
    gates = table(
        ["gate", "", "value", "needs", "what"],
        [
            [
                g["name"],
                mark(g["passes"], "open", "closed"),
                _gate_value(g),
                "-" if g["threshold"] is None else f"{g['threshold']:g}",
                g["detail"],
            ]
            for g in s["gates"]
        ],
    )
    if s.get("running"):
        lines.append(
            f"running: {s['running']['run_id']} phase {s['running']['phase']}, {len(s['running']['files_touched'])} "
            "file(s) touched"
        )
    if s.get("last_run"):
        lr = s["last_run"]
        lines.append(
            f"last run: {lr['run_id']} {lr['status']} at {when(lr['finished_at'] or lr['started_at'])} "
            f"({len(lr['changes'])} change(s))"
        )
    if s.get("next_check"):
        lines.append(f"next check: {when(s['next_check'])}")
    if isinstance(gates, str):
        return "\n".join(lines[:1] + ["  " + line for line in gates.splitlines()] + lines[1:])
    from rich.console import Group
    from rich.text import Text

    return Group(Text(lines[0]), gates, *(Text(line) for line in lines[1:]))


def _human_run(r: dict[str, Any]) -> str:
    lines = [
        f"{r['run_id']}  {r['status']}  {r['method'] or ''}  started {when(r['started_at'])}"
        + ("  (undone)" if r.get("undone_at") else "")
    ]
    lines += [f"    {c['op']:6} {c['filename']}  {c.get('why', '')}" for c in r["changes"]]
    lines += [f"    note: {n}" for n in r.get("notes", [])]
    if r.get("error"):
        lines.append(f"    error: {r['error']}")
    return "\n".join(lines)


def cmd_status(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        status = c.request("GET", "/v1/dream/status", params={"cwd": cwd_of(args)})
    emit(args, {**status, "gates": [typed_gate(g) for g in status["gates"]]}, _human_status)
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
    emit(
        args,
        result,
        lambda r: (
            f"cancelled {r['run_id']}; its changes were restored and the lock rolled back"
            if r["cancelled"]
            else r["message"]
        ),
    )
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        runs = c.request("GET", "/v1/dream/runs", params={"cwd": cwd_of(args)})["runs"]
    emit(
        args,
        {"runs": runs},
        lambda d: "\n".join(_human_run(r) for r in d["runs"]) or "no consolidation has run for this project yet",
    )
    return EXIT_OK


def cmd_undo(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        result = c.request("POST", f"/v1/dream/runs/{args.run_id}/undo")
    emit(args, result, lambda r: f"restored {len(r['restored'])} file(s): {', '.join(r['restored'])}")
    return EXIT_OK
