"""`memoryd doctor`'s checks of the Claude Code side: the plugin or settings-file hooks reach this daemon
with its token, and where the project's memory lives and how MEMORY.md reaches the model."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import ApiError, DaemonNotRunning
from memoryd.base.files import read_capped
from memoryd.cli.doctor_context import Check, Context
from memoryd.client import MemorydClient
from memoryd.config import Settings
from memoryd.integrations.claude_code import HOOK_COMMAND_ARGS
from memoryd.integrations.claude_plugin import PLUGIN_ID, hook_url, plugin_enabled, settings_hooks
from memoryd.integrations.hook_protocol import AWAIT_MODEL_ARG

HOOK_PROBE_TIMEOUT_SECONDS = 3.0
_HOOK_HEADER_FILE = re.compile(r"-H @'([^']+)'")


def _hook_target(handler: dict[str, Any], env: Mapping[str, str]) -> tuple[str | None, str | None, str]:
    """(daemon URL, token, where the token comes from) of one hook handler."""
    url = hook_url(handler)
    if handler.get("type") == "http":
        return url, env.get("MEMORYD_TOKEN") or None, "MEMORYD_TOKEN"
    h = _HOOK_HEADER_FILE.search(str(handler.get("command", "")))
    if not url or not h:
        return None, None, "the hook command"
    try:  # a repository's settings name this file: bounded, never a FIFO or device (issue 41)
        line = (
            read_capped(h.group(1), limits.GIT_POINTER_MAX_BYTES, follow_links=True)[0]
            .decode("utf-8", "replace")
            .strip()
        )
    except OSError:
        return url, None, h.group(1)
    return url, line.split("Bearer ", 1)[1].strip() if "Bearer " in line else None, h.group(1)


def _command_home(command: str) -> Path | None:
    """The MEMORYD_HOME a forwarder hook command sets, or None when it sets none."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    homes = [w.split("=", 1)[1] for w in words if w.startswith("MEMORYD_HOME=")]
    return Path(homes[0]).expanduser() if homes else None


REINSTALL = "memoryd hooks --install (rewrites memoryd's hooks for this daemon)"
REINSTALL_OR_REMOVE = (
    "memoryd hooks --install (rewrites them for this install), or memoryd uninstall (removes what setup installed)"
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def missing_executable(command: str, env: Mapping[str, str]) -> str | None:
    """The program a hook command starts (after its `NAME=value` words) when it does not exist, or is not
    executable: a removed venv or a moved install, which Claude Code would fail to run on every prompt."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    program = next((w for w in words if not _ASSIGNMENT.match(w)), None)
    if program is None:
        return None
    if "/" in program:
        path = Path(program).expanduser()
        return None if path.is_file() and os.access(path, os.X_OK) else program
    return None if shutil.which(program, path=env.get("PATH")) else program


def check_hooks(ctx: Context) -> list[Check]:
    """Each installed hook's URL answers with its token, and it is this daemon that answers."""
    hooks = settings_hooks(Path(ctx.cwd), ctx.env)
    checks = _plugin_checks(ctx, settings_hooks_too=bool(hooks))
    if not hooks:
        return checks or [
            Check(
                "claude-code hooks",
                False,
                "neither the memoryd plugin nor settings-file hooks are installed",
                "memoryd setup (installs the plugin when `claude` is on PATH), or memoryd hooks --install",
            )
        ]
    seen: set[tuple[str, str | None, str | None]] = set()
    forwarders: set[tuple[str, str]] = set()
    for scope, path, handler in hooks:
        command = str(handler.get("command", ""))
        if HOOK_COMMAND_ARGS in command:  # the forwarder: it finds the daemon from its home, and proves it first
            command = command.rstrip().removesuffix(AWAIT_MODEL_ARG).rstrip()  # one command, one line of report
            if (scope, command) not in forwarders:
                forwarders.add((scope, command))
                checks.append(_forwarder_check(ctx, scope, path, command))
            continue
        if handler.get("type") == "http" or "curl " in command:
            checks.append(
                Check(
                    f"claude-code hooks ({scope})",
                    False,
                    f"hooks in {path} send the token with curl/http to whatever listens on the port, unproved",
                    REINSTALL,
                )
            )
            continue
        url, token, token_from = _hook_target(handler, ctx.env)
        if (scope, url, token_from) not in seen:
            seen.add((scope, url, token_from))
            checks.append(_probe_hook(ctx, f"claude-code hooks ({scope})", path, url, token, token_from))
    return checks


def _plugin_checks(ctx: Context, *, settings_hooks_too: bool) -> list[Check]:
    """The memoryd plugin, when a settings file enables it: its hooks need `memoryd` on PATH."""
    plugin = plugin_enabled(Path(ctx.cwd), ctx.env)
    if not plugin:
        return []
    found = shutil.which("memoryd", path=ctx.env.get("PATH"))
    if found is None:
        return [
            Check(
                "claude-code plugin",
                False,
                f"{PLUGIN_ID} is enabled in {plugin[-1]}, but its hooks run `memoryd`, which is not on PATH",
                "install memoryd with `uv tool install` or `pipx install` (both put it on PATH), or add this "
                "install's bin folder to PATH",
            )
        ]
    aside = "; settings-file hooks run too: the daemon answers each event once" if settings_hooks_too else ""
    return [
        Check(
            "claude-code plugin",
            True,
            f"{PLUGIN_ID} enabled in {plugin[-1]}; its hooks run `{found} hook claude-code`{aside}",
        )
    ]


def _forwarder_check(ctx: Context, scope: str, path: Path, command: str) -> Check:
    """A `memoryd hook claude-code` hook: right when the program it starts exists and it forwards to this daemon's
    home."""
    missing = missing_executable(command, ctx.env)
    if missing is not None:
        return Check(
            f"claude-code hooks ({scope})",
            False,
            f"the memoryd hooks in {path} run `{command}`, but {missing} does not exist (a removed venv or a moved "
            "install?): Claude Code fails to run them at every prompt and tool call",
            REINSTALL_OR_REMOVE,
        )
    home = _command_home(command)
    ok = home is None or home == ctx.settings.home
    detail = (
        f"hooks in {path} run `memoryd hook claude-code`, which reaches the daemon at {ctx.client.base_url} "
        "once it proves it holds this home's token"
        if ok
        else f"hooks in {path} forward to the memoryd home {home}, not {ctx.settings.home}"
    )
    return Check(f"claude-code hooks ({scope})", ok, detail, "" if ok else REINSTALL)


def _probe_hook(ctx: Context, name: str, path: Path, url: str | None, token: str | None, token_from: str) -> Check:
    """A hook that calls a URL with a token: it must reach this daemon, which must take the token."""
    if url is None:
        return Check(name, False, f"a memoryd hook in {path} has no URL memoryd can read", REINSTALL)
    if token is None:
        fix = (
            "export MEMORYD_TOKEN=$(cat ~/.memoryd/token) where you start claude"
            if token_from == "MEMORYD_TOKEN"
            else REINSTALL
        )
        return Check(name, False, f"hooks in {path} call {url} without a token ({token_from} is missing)", fix)
    try:
        with MemorydClient(url, token, timeout=HOOK_PROBE_TIMEOUT_SECONDS) as probe:
            answered = probe.status()
    except DaemonNotRunning:
        return Check(
            name,
            False,
            f"hooks in {path} call {url}, where nothing answers (the daemon is at {ctx.client.base_url})",
            REINSTALL,
        )
    except ApiError as exc:
        what = (
            "the token in " + token_from + " is not this daemon's"
            if exc.status == 401
            else f"{url} answered {exc.status} ({exc.code})"
        )
        return Check(name, False, f"hooks in {path}: {what}", REINSTALL)
    if ctx.status is None or answered.get("pid") != ctx.status.get("pid"):
        return Check(
            name,
            False,
            f"hooks in {path} reach pid {answered.get('pid')} at {url}, not the daemon at {ctx.client.base_url}",
            REINSTALL,
        )
    return Check(name, True, f"{path} → {url} answers with its token (pid {answered.get('pid')})")


def _claude_memory_checks(settings: Settings, cwd: str) -> list[Check]:
    """Where memory lives, which dialect, native memory on/off, context once or twice, an old store to import."""
    from memoryd.integrations.claude_memory import location_report

    info = location_report(settings, cwd)
    if "error" in info:
        return [Check("memory dir", False, info["error"], "run doctor from your project directory")]
    where = "Claude Code's own memory dir" if info["same_as_claude_code"] else "memoryd's own dir"
    checks = [
        Check(
            "memory dir",
            True,
            f"{cwd} → {info['memory_dir']} ({where}; dialect {info['dialect']}; memory_base = {info['memory_base']!r})",
        ),
        Check(
            "native memory",
            True,
            f"Claude Code's auto memory is {'on' if info['native_memory'] else 'off'} ({info['native_reason']})",
        ),
        Check("context", not info["fix"], f"MEMORY.md reaches the model {info['context']}", info["fix"]),
    ]
    for why in info.get("ignored_settings") or ():  # a note: memoryd runs on without them
        checks.append(
            Check("settings file", True, f"ignored: {why}", "make it a small regular file inside the project")
        )
    if info["old_store"]:  # a note, not a failure: the project is served from there, nothing is lost
        old = info["old_store"]
        checks.append(
            Check(
                "import",
                True,
                f"{old['memories']} memories stay in memoryd's own store {old['path']} until you import them into "
                f"Claude Code's dir {old['moves_to']}",
                old["fix"],
            )
        )
    return checks


def check_memory_dir(ctx: Context) -> list[Check]:
    """Where memory lives, its dialect, native memory, and whether MEMORY.md reaches the model once."""
    return _claude_memory_checks(ctx.settings, ctx.cwd)
