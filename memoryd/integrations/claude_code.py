"""Claude Code's hook protocol (events, headers) and the hooks block in its settings files.

The answers to the hooks are `claude_code_hooks.py`, beside it; this module knows only the protocol and the files.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path
from typing import Any, Literal

from memoryd.base.errors import InvalidRequest
from memoryd.base.files import atomic_write
from memoryd.integrations.hook_protocol import (  # noqa: F401  (the protocol's names, re-exported for the callers here)
    AWAIT_MODEL_ARG,
    AWAIT_MODEL_BUDGET,
    HOOK_EVENTS,
    HOOK_PATH,
    SESSION_ENV_HEADER,
    SESSION_ENV_VARS,
    TOOL_MATCHER,
)
from memoryd.integrations.settings_files import SettingsRefused, read_settings_text

AUTH_HEADER_FILENAME = "curl-auth-header"  # written by older installs' curl hooks; removed by `hooks --install`
HOOK_COMMAND_ARGS = "hook claude-code"
Scope = Literal["user", "project", "local"]
HookType = Literal["command"]


def parse_session_env(header: str | None) -> dict[str, str] | None:
    """`NAME=value;NAME=value` from the hook's header; None when the hook sent none (older install)."""
    if header is None:
        return None
    pairs = (part.split("=", 1) for part in header.split(";") if "=" in part)
    return {k.strip(): v.strip() for k, v in pairs if k.strip() in SESSION_ENV_VARS}


# ---------------------------------------------------------------------- settings files
def settings_path(scope: Scope, cwd: Path, env: dict[str, str] | None = None) -> Path:
    """user: ~/.claude/settings.json ($CLAUDE_CONFIG_DIR honoured); project/local: <cwd>/.claude/."""
    env = dict(os.environ) if env is None else env
    if scope == "user":
        base = (
            Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
            if env.get("CLAUDE_CONFIG_DIR")
            else Path(env.get("HOME") or os.path.expanduser("~")) / ".claude"
        )
        return base / "settings.json"
    name = "settings.json" if scope == "project" else "settings.local.json"
    return cwd / ".claude" / name


def memoryd_command() -> str:
    """How a hook starts this memoryd: its installed command by absolute path (Claude Code's PATH may not have
    it), else this Python running the package."""
    import sys

    found = shutil.which("memoryd")
    if found:
        return shlex.quote(found)
    return f"{shlex.quote(sys.executable)} -m memoryd"


def hook_command(home: Path, memoryd: str | None = None) -> str:
    """The settings-file hooks' command: the same forwarder as the plugin's, which proves the daemon holds this
    home's token before it sends it (a curl to the port would hand the token to any program listening there)."""
    return f"MEMORYD_HOME={shlex.quote(str(home))} {memoryd or memoryd_command()} {HOOK_COMMAND_ARGS}"


def command_hook(command: str, event: str) -> dict[str, Any]:
    _, timeout, _ = HOOK_EVENTS[event]
    return {"type": "command", "command": command, "timeout": timeout}


def hooks_block(command: str) -> dict[str, Any]:
    """The `hooks` object for Claude Code settings: every event memoryd answers, tool calls by `matcher`."""
    hooks: dict[str, Any] = {}
    for event in HOOK_EVENTS:
        group: dict[str, Any] = {"hooks": [command_hook(command, event)]}
        if event == "UserPromptSubmit":  # the model's pick for the prompt, handed over at the next tool batch
            timeout = AWAIT_MODEL_BUDGET[1]
            group["hooks"].append(
                {"type": "command", "command": f"{command} {AWAIT_MODEL_ARG}", "timeout": timeout, "async": True}
            )
        if event == "PreToolUse":
            group = {"matcher": TOOL_MATCHER, **group}
        hooks[event] = [group]
    return {"hooks": hooks}


def is_memoryd_hook(handler: Any) -> bool:
    """memoryd's hook: the forwarder command, or an older install's curl or http hook to the endpoint."""
    if not isinstance(handler, dict):
        return False
    command = str(handler.get("command", ""))
    return (
        HOOK_PATH in command
        or HOOK_PATH in str(handler.get("url", ""))
        or (
            "memoryd" in command and command.rstrip().removesuffix(AWAIT_MODEL_ARG).rstrip().endswith(HOOK_COMMAND_ARGS)
        )
    )


def _without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings)  # a copy: callers compare the result with the original
    cleaned: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            cleaned[event] = groups
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not is_memoryd_hook(h)]
                if handlers:
                    kept_groups.append({**group, "hooks": handlers})
            else:
                kept_groups.append(group)
        if kept_groups:
            cleaned[event] = kept_groups
    result = dict(settings)
    if cleaned:
        result["hooks"] = cleaned
    else:
        result.pop("hooks", None)
    return result


def _read_settings(path: Path, within: Path | None = None) -> dict[str, Any]:
    """`within`: the repository whose file this is (bounded and kept inside it by `read_settings_text`)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(read_settings_text(path, within=within) or "{}")
    except SettingsRefused as exc:
        raise InvalidRequest(f"{exc}. Nothing was changed.") from exc
    except json.JSONDecodeError as exc:
        raise InvalidRequest(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it by hand, then run the command again. Nothing was changed."
        ) from exc
    if not isinstance(data, dict):
        raise InvalidRequest(f"{path} does not hold a JSON object; fix it by hand. Nothing was changed.")
    return data


def _write_settings(path: Path, data: dict[str, Any]) -> Path | None:
    backup = None
    if path.exists():
        backup = path.with_name(path.name + ".memoryd-backup")
        shutil.copy2(path, backup)
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return backup


def install_hooks(path: Path, block: dict[str, Any]) -> dict[str, Any]:
    """Merge memoryd's hooks into a settings file, keeping every other hook; idempotent."""
    current = _read_settings(path)
    merged = _without_ours(current)
    hooks = dict(merged.get("hooks") or {})
    for event, groups in block["hooks"].items():
        hooks[event] = list(hooks.get(event) or []) + groups
    merged["hooks"] = hooks
    changed = merged != current
    backup = _write_settings(path, merged) if changed else None
    return {
        "path": str(path),
        "changed": changed,
        "backup": str(backup) if backup else None,
        "events": sorted(block["hooks"]),
    }


def uninstall_hooks(path: Path) -> dict[str, Any]:
    current = _read_settings(path)
    cleaned = _without_ours(current)
    changed = cleaned != current
    backup = _write_settings(path, cleaned) if changed else None
    return {"path": str(path), "changed": changed, "backup": str(backup) if backup else None}


def hooks_forward_session_env(cwd: Path, env: dict[str, str] | None = None) -> bool:
    """Do the installed SessionStart hooks send the session's native-memory switches (newer installs)?"""
    for scope in ("user", "project", "local"):
        try:
            data = _read_settings(settings_path(scope, cwd, env), None if scope == "user" else cwd)  # type: ignore[arg-type]
        except InvalidRequest:
            continue
        groups = (data.get("hooks") or {}).get("SessionStart") or []
        handlers = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if is_memoryd_hook(h)]
        if any(
            SESSION_ENV_HEADER not in json.dumps(h) and HOOK_COMMAND_ARGS not in str(h.get("command")) for h in handlers
        ):
            return False
    return True


def installed_scopes(cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    """Which settings files hold memoryd's hooks (for `memoryd doctor`)."""
    found = []
    for scope in ("user", "project", "local"):
        try:
            data = _read_settings(settings_path(scope, cwd, env), None if scope == "user" else cwd)  # type: ignore[arg-type]
        except InvalidRequest:
            continue
        hooks = data.get("hooks") or {}
        if any(
            is_memoryd_hook(h)
            for groups in hooks.values()
            if isinstance(groups, list)
            for g in groups
            if isinstance(g, dict)
            for h in g.get("hooks", [])
        ):
            found.append(scope)
    return found
