"""serve, status, stop, install-service, uninstall-service."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from memoryd.cli.output import EXIT_DOWN, EXIT_FAIL, EXIT_OK, client_of, common, cwd_of, emit, fail, settings_of, when

if TYPE_CHECKING:
    from memoryd.cli.results import StopResult


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="run the daemon in the foreground")
    p.add_argument("--host", default=None, help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 7377; 0 picks a free one)")
    p.set_defaults(func=cmd_serve)

    p = common(
        sub.add_parser(
            "status", help="is the daemon up, in which mode, doing what, and where this project's memory lives"
        )
    )
    p.set_defaults(func=cmd_status)

    p = common(
        sub.add_parser("stop", help="stop the running daemon (SIGTERM: running jobs finish or are re-queued)"),
        cwd=False,
    )
    p.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for it to exit (default 15)")
    p.set_defaults(func=cmd_stop)

    p = common(
        sub.add_parser("install-service", help="write, enable and start the systemd/launchd user service"), cwd=False
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the unit and the commands without writing or running anything"
    )
    p.set_defaults(func=cmd_install_service)

    p = common(
        sub.add_parser("uninstall-service", help="stop and disable the user service and remove its files"), cwd=False
    )
    p.add_argument("--dry-run", action="store_true", help="print what would be removed and run, without doing it")
    p.set_defaults(func=cmd_uninstall_service)


def cmd_serve(args: argparse.Namespace) -> int:
    from memoryd.base.process import restart_without_thread_caches

    restart_without_thread_caches()  # before the daemon's imports: an exec is ~40 ms now
    from memoryd.server import serve

    settings = settings_of(args)
    if args.host:
        settings.server.host = args.host
    if args.port is not None:
        settings.server.port = args.port
    return serve(settings)


def _human_status(s: dict[str, Any]) -> str:
    up = int(s.get("uptime_seconds", 0) or 0)
    days = f"{up // 86400}d " if up >= 86400 else ""
    lines = [
        f"memoryd {s.get('version')} running (pid {s.get('pid')}, up "
        f"{days}{time.strftime('%H:%M:%S', time.gmtime(up % 86400))})",
        f"mode:    {s.get('mode')}"
        + (
            f" (model {s['model']})"
            if s.get("model")
            else " (no LLM: local recall, deterministic extraction and consolidation)"
        ),
        f"home:    {s.get('home')}",
        f"log:     {s.get('log_file')} (memoryd logs -f)",
    ]
    usage = s.get("llm_usage") or {}
    if usage.get("tokens_used"):
        lines.append(f"llm:     {usage['tokens_used']:,} tokens today (cap {usage.get('daily_cap') or 'none'})")
    for kind, folders in (s.get("watched_folders") or {}).items():
        lines.append(f"watching {kind}: {len(folders)} folder(s)")
    jobs = s.get("jobs")
    if isinstance(jobs, dict):
        counts = ", ".join(
            f"{k} {v}"
            for k, v in jobs.items()
            if isinstance(v, int) and not isinstance(v, bool) and k != "every_n_turns"
        )
        lines.append("jobs:    " + counts + (f" (now: {jobs['current_job']})" if jobs.get("current_job") else ""))
    grep = s.get("grep")
    if isinstance(grep, dict) and grep.get("engine"):
        lines.append(
            "grep:    "
            + (
                f"ripgrep ({grep.get('version')}, {grep.get('ripgrep')})"
                if grep["engine"] == "ripgrep"
                else "built-in scanner (no ripgrep found)"
            )
        )
    dream = s.get("dream")
    if isinstance(dream, dict) and dream.get("next_check"):
        lines.append(f"dream:   next check {when(dream['next_check'])}")
    for directory, files in (s.get("invalid_files") or {}).items():
        for f in files:
            lines.append(f"problem: {directory}/{f['filename']}: {f['error']}")
    from memoryd.integrations.claude_memory import location_lines

    lines += location_lines(s.get("memory_location"))
    return "\n".join(lines)


def cmd_status(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        status = client.status()
    from pathlib import Path

    from memoryd.cli.config import log_file
    from memoryd.integrations.claude_memory import location_report

    status["log_file"] = str(log_file(Path(status["home"])))
    status["memory_location"] = location_report(settings_of(args), cwd_of(args))
    emit(args, status, _human_status)
    return EXIT_OK


def cmd_stop(args: argparse.Namespace) -> int:
    """SIGTERM the daemon that holds this home's daemon.lock and wait until it lets go. A daemon.json whose pid
    does not hold the lock is stale: it is reported and removed, and nothing is signalled (issue 52)."""
    from memoryd.client import home_from_env
    from memoryd.service.stopping import stop_daemon

    home = home_from_env()
    stopped = stop_daemon(home, timeout=args.timeout)
    if stopped.pid is None and stopped.gone:
        named = (
            f" {home / 'daemon.json'} named pid {stopped.stale.get('pid')}, not memoryd: removed it, signalled nothing."
            if stopped.stale
            else ""
        )
        return fail(
            args,
            f"memoryd is not running (no daemon holds {home / 'daemon.lock'})." + named,
            EXIT_DOWN,
            "daemon_not_running",
        )
    if not stopped.gone:
        return fail(args, f"{stopped.why}.", EXIT_DOWN if stopped.code == "starting" else EXIT_FAIL, stopped.code)
    result: StopResult = {"stopped": True, "pid": stopped.pid or 0}
    emit(args, result, f"stopped memoryd (pid {stopped.pid})")
    return EXIT_OK


def cmd_install_service(args: argparse.Namespace) -> int:
    from memoryd.service.units import install_service

    result = install_service(settings_of(args), dry_run=args.dry_run)

    def human(r: dict[str, Any]) -> str:
        if r["dry_run"]:
            lines = [f"would write {r['path']}:", "", r["unit"].rstrip(), ""]
            lines += [f"would add to config.toml: {c}" for c in r["config_added"]]
            lines += (
                [f"would keep {', '.join(r['secrets'])} in {r['secrets_file']} (mode 0600)"] if r["secrets"] else []
            )
            return "\n".join(lines + ["would run:"] + [f"  {c}" for c in r["commands"]])
        lines = [f"wrote {r['path']}"] + [f"added to config.toml: {c}" for c in r["config_added"]]
        lines += [f"kept {', '.join(r['secrets'])} in {r['secrets_file']} (mode 0600)"] if r["secrets"] else []
        lines += [f"ran: {c}" for c in r["ran"]]
        return "\n".join(lines + ["memoryd runs as a service now; check it with `memoryd doctor`"])

    emit(args, result, human)
    return EXIT_OK


def cmd_uninstall_service(args: argparse.Namespace) -> int:
    from memoryd.service.units import uninstall_service

    result = uninstall_service(settings_of(args), dry_run=args.dry_run)

    def human(r: dict[str, Any]) -> str:
        if not r["installed"]:
            return f"no service installed ({r['path']} does not exist)"
        if r["dry_run"]:
            return "\n".join([f"would run: {c}" for c in r["commands"]] + [f"would remove {r['path']}"])
        return "\n".join(
            [f"ran: {c}" for c in r["ran"]]
            + [f"could not run (ignored): {c}" for c in r["failed"]]
            + [f"removed {p}" for p in r["removed"]]
        )

    emit(args, result, human)
    return EXIT_OK
