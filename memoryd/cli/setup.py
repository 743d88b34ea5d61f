"""`memoryd setup`: the rest of the install in one step, idempotent, with --dry-run: the service,
Claude Code (its plugin when `claude` is on PATH, else settings-file hooks), MCP blocks where
wanted, a pending import to offer, then doctor's summary."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.cli.output import EXIT_FAIL, EXIT_OK, common, cwd_of, emit, settings_of

if TYPE_CHECKING:
    from memoryd.cli.results import DoctorSummary, SetupAction, SetupResult, SetupStep
    from memoryd.config import Settings

CLAUDE_CLI_TIMEOUT_SECONDS = 120
FOREGROUND = "memoryd serve"


# What the plugin gives Claude Code, said wherever setup names it: its MCP server needs no setup of its own.
PLUGIN_BRINGS = "which brings memoryd's hooks (`memoryd hook claude-code`) and its MCP server (`memoryd mcp`) too"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from memoryd.mcp.configs import CLIENTS

    p = common(
        sub.add_parser(
            "setup", help="set up the rest in one step: the service, Claude Code, MCP where wanted, then a check"
        )
    )
    p.add_argument("--dry-run", action="store_true", help="say what each step would do; change nothing")
    p.add_argument("--no-service", action="store_true", help="leave the service alone (run `memoryd serve` yourself)")
    p.add_argument(
        "--hooks",
        action="store_true",
        help="connect Claude Code with settings-file hooks even when `claude` is on PATH (no plugin)",
    )
    p.add_argument("--no-claude-code", action="store_true", help="leave Claude Code alone")
    p.add_argument(
        "--mcp",
        action="append",
        default=[],
        choices=sorted(CLIENTS),
        metavar="CLIENT",
        help=f"also print the MCP config for CLIENT ({', '.join(sorted(CLIENTS))}); repeatable",
    )
    p.set_defaults(func=cmd_setup)


def _step(
    name: str, action: SetupAction, detail: str, *, foreground: str | None = None, command: str | None = None
) -> SetupStep:
    """One step's report; `foreground` (run the daemon by hand) and `command` (finish the step) only when it has
    them."""
    step: SetupStep = {"step": name, "action": action, "detail": detail}
    if foreground is not None:
        step["foreground"] = foreground
    if command is not None:
        step["command"] = command
    return step


def start_in_background(settings: Settings, why: str) -> SetupStep:
    """No user service manager: the daemon as a process of its own session, detached from this
    terminal; it runs until logout or reboot (then `memoryd setup` again starts it)."""
    import os
    import sys
    import time

    from memoryd.base import limits
    from memoryd.cli.config import log_file
    from memoryd.service.runtime_file import read_runtime_file

    env = {**os.environ, "MEMORYD_HOME": str(settings.home)}
    proc = subprocess.Popen(  # its log is its own file; its stderr would only repeat it
        [sys.executable, "-m", "memoryd", "serve"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    deadline = time.monotonic() + limits.BACKGROUND_START_SECONDS
    while time.monotonic() < deadline and proc.poll() is None:
        running = read_runtime_file(settings.home)
        if running is not None and int(running["pid"]) == proc.pid:
            return _step(
                "service",
                "done",
                f"{why}, so no service here: started the daemon in the background (pid {proc.pid}, log "
                f"{log_file(settings.home)}); it runs until you log out or reboot, then run `memoryd setup` again "
                f"(or `{FOREGROUND}` in a terminal)",
                foreground=FOREGROUND,
            )
        time.sleep(0.1)
    if proc.poll() is None:
        proc.terminate()
    return _step(
        "service",
        "failed",
        f"{why}, so no service here, and the daemon started in the background did not answer "
        f"(exit {proc.poll()}): run `{FOREGROUND}` in a terminal to see why",
        foreground=FOREGROUND,
    )


def restart_other_version(settings: Settings, dry_run: bool) -> SetupStep | None:
    """A daemon started before an upgrade runs the old code from memory (the files under it were replaced): stop
    it, so the service step starts this version; None when none runs or it runs this one."""
    from memoryd.service.stopping import running_version, stop_daemon
    from memoryd.version import version

    found = running_version(settings.home)
    if found is None or found[1] == version():
        return None
    pid, theirs = found
    said = f"the daemon (pid {pid}) runs memoryd {theirs}, this is memoryd {version()}"
    if dry_run:
        return _step("restart", "would", f"{said}: stop it, then start this version")
    stopped = stop_daemon(settings.home)
    if not stopped.gone:
        return _step("restart", "failed", f"{said}, and it did not stop: {stopped.why}", command="memoryd stop")
    return _step("restart", "done", f"{said}: stopped it; the service step starts this version")


def setup_service(settings: Settings, dry_run: bool) -> SetupStep:
    import platform

    from memoryd.base.errors import MemorydError
    from memoryd.service.runtime_file import read_runtime_file
    from memoryd.service.units import install_service, manager_unavailable, target

    t = target(settings, system="Darwin" if platform.system() == "Darwin" else "Linux")
    running = read_runtime_file(settings.home)
    if t.path.exists() and t.path.read_text(encoding="utf-8") == t.text and running is not None:
        return _step(
            "service", "already", f"{t.system} service {t.path} is installed and the daemon runs (pid {running['pid']})"
        )
    why = manager_unavailable(t.system)
    if why is not None:
        if running is not None:
            return _step(
                "service",
                "already",
                f"{why}; the daemon runs without a service (pid {running['pid']}) until logout or reboot",
            )
        if dry_run:
            return _step(
                "service",
                "would",
                f"{why}, so no service here: start the daemon in the background (until logout or reboot)",
                foreground=FOREGROUND,
            )
        return start_in_background(settings, why)
    if dry_run:
        return _step("service", "would", f"write {t.path} and run: " + "; ".join(" ".join(c) for c in t.enable))
    try:
        result = install_service(settings)
    except MemorydError as exc:
        return _step("service", "failed", f"{exc.message} Meanwhile: {FOREGROUND}", foreground=FOREGROUND)
    return _step("service", "done", f"wrote {result['path']}; ran {'; '.join(result['ran'])}")


def _claude(claude: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [claude, *args], capture_output=True, text=True, timeout=CLAUDE_CLI_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL
    )


def setup_claude_code(settings: Settings, cwd: str, dry_run: bool, prefer_hooks: bool) -> list[SetupStep]:
    """Claude Code connected through the memoryd plugin, or through settings-file hooks without `claude` (or with
    --hooks); the plugin replaces settings-file hooks installed before."""
    from memoryd.integrations.claude_code import settings_path
    from memoryd.integrations.claude_plugin import settings_hooks

    claude = shutil.which("claude")
    user_hooks = settings_path("user", Path(cwd))
    ours = [path for scope, path, _ in settings_hooks(Path(cwd)) if scope == "user"]
    if claude is None or prefer_hooks:
        why = "`claude` is not on PATH" if claude is None else "--hooks"
        return [_settings_hooks_step(settings, cwd, user_hooks, why=why, installed=bool(ours), dry_run=dry_run)]
    plugin = _plugin_step(claude, cwd, dry_run)
    if plugin["action"] == "failed":
        return [plugin]
    steps = [plugin]
    if ours:  # the plugin replaces them: one answer per event
        steps.append(_old_hooks_removed(user_hooks, dry_run))
    return steps


def _settings_hooks_step(
    settings: Settings, cwd: str, user_hooks: Path, *, why: str, installed: bool, dry_run: bool
) -> SetupStep:
    from memoryd.integrations.claude_plugin import plugin_enabled

    if installed:
        return _step(
            "claude code",
            "already",
            f"memoryd's hooks are in {user_hooks} ({why}: settings-file hooks, not the plugin)",
        )
    if plugin_enabled(Path(cwd)):
        return _step(
            "claude code",
            "skipped",
            "the memoryd plugin is enabled; settings-file hooks beside it would answer every event twice",
        )
    if dry_run:
        return _step(
            "claude code", "would", f"merge memoryd's hooks into {user_hooks} ({why}), with a backup of the file"
        )
    return _hooks_install(settings, user_hooks)


def _plugin_step(claude: str, cwd: str, dry_run: bool) -> SetupStep:
    """The memoryd plugin installed through the `claude` CLI (or already enabled)."""
    from memoryd.integrations.claude_plugin import PLUGIN_ID, install_commands, packaged_marketplace, plugin_enabled

    if plugin_enabled(Path(cwd)):
        return _step("claude code", "already", f"the plugin {PLUGIN_ID} is enabled, {PLUGIN_BRINGS}")
    commands = install_commands(claude, str(packaged_marketplace()))
    if dry_run:
        return _step(
            "claude code",
            "would",
            f"install the plugin {PLUGIN_ID}, {PLUGIN_BRINGS}; run: " + "; ".join(" ".join(c) for c in commands),
        )
    for cmd in commands:
        proc = _claude(*cmd)
        if proc.returncode != 0 and "already" not in (proc.stdout + proc.stderr).lower():
            said = (proc.stderr or proc.stdout).strip().splitlines()
            return _step(
                "claude code",
                "failed",
                f"`{' '.join(cmd)}` failed ({said[-1] if said else f'exit {proc.returncode}'}); "
                f"`memoryd setup --hooks` connects Claude Code through its settings file instead",
            )
    return _step(
        "claude code", "done", f"installed the plugin {PLUGIN_ID} from {packaged_marketplace()}, {PLUGIN_BRINGS}"
    )


def _old_hooks_removed(user_hooks: Path, dry_run: bool) -> SetupStep:
    """memoryd's settings-file hooks removed once the plugin is in (the plugin replaces them)."""
    from memoryd.integrations.claude_code import uninstall_hooks

    if dry_run:
        return _step(
            "settings-file hooks",
            "would",
            f"remove memoryd's hooks from {user_hooks} (the plugin replaces them), with a backup",
        )
    result = uninstall_hooks(user_hooks)
    return _step(
        "settings-file hooks",
        "done",
        f"removed memoryd's hooks from {user_hooks}, the plugin replaces them (backup: {result['backup']})",
    )


def _hooks_install(settings: Settings, path: Path) -> SetupStep:
    from memoryd.integrations.claude_code import hook_command, hooks_block, install_hooks
    from memoryd.service.auth import load_or_create_token

    load_or_create_token(settings.home, settings.token_override)
    result = install_hooks(path, hooks_block(hook_command(settings.home)))
    backup = f" (backup: {result['backup']})" if result["backup"] else ""
    return _step("claude code", "done", f"merged memoryd's hooks into {path}{backup}")


def pending_import(settings: Settings, cwd: str) -> SetupStep | None:
    from memoryd.integrations.claude_memory import location_report

    info = location_report(settings, cwd)
    old = info.get("old_store")
    if not old:
        return None
    return _step(
        "import",
        "skipped",
        f"{old['memories']} memories of this project stay in memoryd's own store {old['path']} until you import "
        f"them into Claude Code's dir: {old['fix']}",
        command=f"memoryd import --from '{old['path']}'",
    )


def cmd_setup(args: argparse.Namespace) -> int:
    from memoryd.mcp.configs import print_config

    settings = settings_of(args)
    cwd = cwd_of(args)
    steps: list[SetupStep] = []
    if not args.no_service:
        restart = restart_other_version(settings, args.dry_run)
        steps += [restart] if restart else []
        steps.append(setup_service(settings, args.dry_run))
    if not args.no_claude_code:
        steps += setup_claude_code(settings, cwd, args.dry_run, args.hooks)
    for client in args.mcp:
        where, block = print_config(client)
        steps.append(_step(f"mcp {client}", "skipped", f"{where}:\n{block}"))
    offer = pending_import(settings, cwd)
    if offer:
        steps.append(offer)
    summary = None if args.dry_run else _doctor_summary(settings, cwd)
    data: SetupResult = {"dry_run": args.dry_run, "steps": steps, "doctor": summary}
    emit(args, data, _human)
    failed = any(s["action"] == "failed" for s in steps) or (summary is not None and not summary["ok"])
    return EXIT_FAIL if failed else EXIT_OK


def _doctor_summary(settings: Settings, cwd: str) -> DoctorSummary:
    from memoryd.cli.doctor_checks import run_checks
    from memoryd.client import MemorydClient

    with MemorydClient.from_settings(settings, timeout=3) as client:
        checks = run_checks(settings, client, cwd)
    return {"ok": all(c.ok for c in checks), "failed": [c.as_dict() for c in checks if not c.ok], "checks": len(checks)}


def _human(d: dict[str, Any]) -> str:
    lines = [f"{s['action']:<8} {s['step']}: {s['detail']}" for s in d["steps"]]
    doctor = d.get("doctor")
    if doctor is not None:
        lines.append("")
        if doctor["ok"]:
            lines.append(f"doctor: all {doctor['checks']} checks pass")
        else:
            lines.append(
                f"doctor: {len(doctor['failed'])} of {doctor['checks']} checks fail (`memoryd doctor` for all of them):"
            )
            lines += [
                f"  FAIL {c['name']}: {c['detail']}" + (f"\n       fix: {c['fix']}" if c["fix"] else "")
                for c in doctor["failed"]
            ]
    elif d["dry_run"]:
        lines.append("\n(dry run: nothing was changed)")
    return "\n".join(lines)
