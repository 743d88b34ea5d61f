"""`memoryd uninstall`: undo `memoryd setup` in one step: Claude Code's plugin, marketplace, hooks and MCP server,
then the service and the daemon. Memories stay, and it says where; `--purge` removes `$MEMORYD_HOME` too.
It ends with the command that removes the package itself, which a program cannot do to its own install."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.cli.output import EXIT_FAIL, EXIT_OK, common, cwd_of, emit, settings_of

if TYPE_CHECKING:
    from memoryd.cli.results import MemoryPlace, SetupAction, SetupStep, UninstallResult
    from memoryd.cli.uninstall_claude import Removal
    from memoryd.config import Settings

UV_RECEIPT = "uv-receipt.toml"  # in the environment `uv tool install` made
PIPX_METADATA = "pipx_metadata.json"  # in the environment `pipx install` made
MEMORY_INDEX = "MEMORY.md"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        sub.add_parser(
            "uninstall",
            help="undo setup: the plugin, hooks, MCP entry, service and daemon; memories stay (--purge: all of it)",
        )
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be removed; change nothing")
    p.add_argument(
        "--purge", action="store_true", help="also remove $MEMORYD_HOME: its memories, token, state, config and log"
    )
    p.set_defaults(func=cmd_uninstall)


def _step(name: str, action: SetupAction, detail: str) -> SetupStep:
    return {"step": name, "action": action, "detail": detail}


def package_command(prefix: Path = Path(sys.prefix)) -> str:
    """The command that removes this install, by the tool that made its environment."""
    if (prefix / UV_RECEIPT).exists():
        return "uv tool uninstall memoryd"
    if (prefix / PIPX_METADATA).exists():
        return "pipx uninstall memoryd"
    return f"{sys.executable} -m pip uninstall memoryd (or delete the environment {prefix})"


def claude_code_steps(cwd: Path, dry_run: bool) -> list[SetupStep]:
    """The plugin and marketplace, the user-scope MCP server (through `claude`), and memoryd's settings-file hooks."""
    from memoryd.cli.uninstall_claude import hook_removals, mcp_removal, plugin_removals

    env = dict(os.environ)
    claude = shutil.which("claude")
    found: list[Removal] = hook_removals(cwd, env)
    if claude is not None:
        mcp = mcp_removal(claude, env)
        found = plugin_removals(claude, env) + ([mcp] if mcp else []) + found
    elif plugin_removals("claude", env):  # recorded, but no `claude` to remove it with: say the commands
        return [
            _step(
                "claude code",
                "failed",
                "the memoryd plugin is installed but `claude` is not on PATH to remove it; with claude on PATH run: "
                + "; ".join(" ".join(r.command or []) for r in plugin_removals("claude", env)),
            )
        ] + [_removed(r, env, dry_run) for r in found]
    if not found:
        return [_step("claude code", "already", "no memoryd plugin, hooks or MCP server in Claude Code's settings")]
    return [_removed(r, env, dry_run) for r in found]


def _removed(removal: Removal, env: dict[str, str], dry_run: bool) -> SetupStep:
    from memoryd.cli.uninstall_claude import remove

    how = f" (`{' '.join(removal.command)}`)" if removal.command else ""
    if dry_run:
        return _step("claude code", "would", f"remove {removal.what} from {removal.where}{how}")
    failed = remove(removal, env)
    if failed is not None:
        return _step("claude code", "failed", f"{removal.what} in {removal.where}: {failed}")
    return _step("claude code", "done", f"removed {removal.what} from {removal.where}{how}")


def service_step(settings: Settings, dry_run: bool) -> SetupStep:
    """The systemd unit or launchd agent, disabled and removed (it would start the daemon again)."""
    from memoryd.service.units import uninstall_service

    result = uninstall_service(settings, dry_run=dry_run)
    if not result["installed"]:
        return _step("service", "already", f"no service installed ({result['path']})")
    if dry_run:
        return _step("service", "would", f"run {'; '.join(result['commands'])}, then remove {result['path']}")
    left = f"; could not run (ignored): {'; '.join(result['failed'])}" if result["failed"] else ""
    return _step("service", "done", f"removed {', '.join(result['removed'])}{left}")


def daemon_step(settings: Settings, dry_run: bool) -> SetupStep:
    """A daemon still running (started in the background by setup, or by `memoryd serve`) is stopped."""
    from memoryd.service.stopping import running_version, stop_daemon

    found = running_version(settings.home)
    if found is None:
        return _step("daemon", "already", f"no daemon serves {settings.home}")
    if dry_run:
        return _step("daemon", "would", f"stop the daemon (pid {found[0]}, memoryd {found[1]})")
    stopped = stop_daemon(settings.home)
    if not stopped.gone:
        return _step("daemon", "failed", stopped.why)
    return _step("daemon", "done", f"stopped the daemon (pid {found[0]})")


def memory_places(settings: Settings) -> list[MemoryPlace]:
    """Every folder holding memories, with how many, and whether it goes with `$MEMORYD_HOME` (--purge)."""
    from memoryd.integrations.claude_code import settings_path

    claude_projects = settings_path("user", Path.cwd()).parent / "projects"
    dirs = sorted(claude_projects.glob("*/memory")) + sorted((settings.home / "projects").glob("*/memory"))
    dirs += [settings.home / "global"]
    places: list[MemoryPlace] = []
    for folder in dirs:
        count = sum(1 for f in folder.rglob("*.md") if f.name != MEMORY_INDEX) if folder.is_dir() else 0
        if count:
            places.append({"path": str(folder), "memories": count, "in_home": folder.is_relative_to(settings.home)})
    return places


def home_step(settings: Settings, purge: bool, dry_run: bool) -> SetupStep:
    home = settings.home
    if not home.exists():
        return _step("home", "already", f"{home} does not exist")
    if not purge:
        return _step("home", "skipped", f"kept {home} (memories, token, state, config, log): --purge removes it")
    if dry_run:
        return _step("home", "would", f"remove {home} and everything in it")
    shutil.rmtree(home)
    return _step("home", "done", f"removed {home}")


def cmd_uninstall(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    places = memory_places(settings)
    steps = claude_code_steps(Path(cwd_of(args)), args.dry_run)
    steps += [service_step(settings, args.dry_run), daemon_step(settings, args.dry_run)]
    failed = any(s["action"] == "failed" for s in steps)
    steps.append(
        home_step(settings, args.purge and not failed, args.dry_run)
    )  # nothing is deleted while a daemon may run
    data: UninstallResult = {
        "dry_run": args.dry_run,
        "purge": args.purge,
        "steps": steps,
        "memories": places,
        "package": package_command(),
    }
    emit(args, data, _human)
    return EXIT_FAIL if failed else EXIT_OK


def _human(d: dict[str, Any]) -> str:
    lines = [f"{s['action']:<8} {s['step']}: {s['detail']}" for s in d["steps"]]
    gone = d["purge"] and not d["dry_run"]
    for place in d["memories"]:
        verb = ("removed" if gone else "would remove") if d["purge"] and place["in_home"] else "kept"
        lines.append(f"{verb:<8} memories: {place['memories']} in {place['path']}")
    if not d["memories"]:
        lines.append("no memories found")
    lines.append("")
    if d["dry_run"]:
        lines.append("(dry run: nothing was changed)")
    lines.append(f"to remove the memoryd package itself: {d['package']}")
    return "\n".join(lines)
