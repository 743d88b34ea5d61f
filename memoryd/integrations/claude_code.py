"""Claude Code's hook protocol (events, headers) and the hooks block in its settings files.

The answers to the hooks are `claude_code_hooks.py`, beside it; this module knows only the protocol and the files.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Literal

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest
from memoryd.base.files import atomic_write

HOOK_PATH = "/v1/hooks/claude-code"
# The session's own switches for native memory travel in this header (the daemon's env is not the session's).
SESSION_ENV_HEADER = "X-Claude-Code-Env"
SESSION_ENV_VARS = ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_SIMPLE", "MEMORYD_RECALL")
AUTH_HEADER_FILENAME = "curl-auth-header"
Scope = Literal["user", "project", "local"]
HookType = Literal["command", "http"]

# event → (curl --max-time, hook timeout, whether Claude Code reads the answer)
HOOK_EVENTS: dict[str, tuple[int, int, bool]] = {
    "SessionStart": (4, 5, True),
    "UserPromptSubmit": (3, 5, True),
    "Stop": (2, 5, False),
    "SubagentStop": (2, 5, False),
    "PreCompact": (2, 5, False),
    "SessionEnd": (1, 2, False),
}


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


def write_auth_header(home: Path, token: str) -> Path:
    """`$MEMORYD_HOME/curl-auth-header` (0600): curl reads the token from it, so it never
    appears on a process command line."""
    path = home / AUTH_HEADER_FILENAME
    atomic_write(path, f"Authorization: Bearer {token}\n", mode=limits.TOKEN_FILE_MODE)
    return path


def command_hook(url: str, auth_header: Path, event: str) -> dict[str, Any]:
    max_time, timeout, answer_read = HOOK_EVENTS[event]
    out = "" if answer_read else "-o /dev/null "
    session_env = ";".join(f"{name}=${{{name}:-}}" for name in SESSION_ENV_VARS)
    command = (
        f"curl -sS --fail --max-time {max_time} -H 'Content-Type: application/json' "
        f"-H @'{auth_header}' -H \"{SESSION_ENV_HEADER}: {session_env}\" --data-binary @- {out}{url}{HOOK_PATH} || true"
    )
    return {"type": "command", "command": command, "timeout": timeout}


def http_hook(url: str, event: str) -> dict[str, Any]:
    _, timeout, _ = HOOK_EVENTS[event]
    return {
        "type": "http",
        "url": f"{url}{HOOK_PATH}",
        "timeout": timeout,
        "headers": {
            "Authorization": "Bearer $MEMORYD_TOKEN",
            SESSION_ENV_HEADER: ";".join(f"{n}=${n}" for n in SESSION_ENV_VARS),
        },
        "allowedEnvVars": ["MEMORYD_TOKEN", *SESSION_ENV_VARS],
    }


def hooks_block(url: str, auth_header: Path, hook_type: HookType = "command") -> dict[str, Any]:
    """The `hooks` object for Claude Code settings. SessionStart only takes command hooks."""
    hooks: dict[str, Any] = {}
    for event in HOOK_EVENTS:
        handler = (
            command_hook(url, auth_header, event)
            if hook_type == "command" or event == "SessionStart"
            else http_hook(url, event)
        )
        hooks[event] = [{"hooks": [handler]}]
    return {"hooks": hooks}


def _is_ours(handler: Any) -> bool:
    if not isinstance(handler, dict):
        return False
    return HOOK_PATH in str(handler.get("command", "")) or HOOK_PATH in str(handler.get("url", ""))


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
                handlers = [h for h in group["hooks"] if not _is_ours(h)]
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


def _read_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
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
            data = _read_settings(settings_path(scope, cwd, env))  # type: ignore[arg-type]
        except InvalidRequest:
            continue
        groups = (data.get("hooks") or {}).get("SessionStart") or []
        handlers = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if _is_ours(h)]
        if any(SESSION_ENV_HEADER not in json.dumps(h) for h in handlers):
            return False
    return True


def installed_scopes(cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    """Which settings files hold memoryd's hooks (for `memoryd doctor`)."""
    found = []
    for scope in ("user", "project", "local"):
        try:
            data = _read_settings(settings_path(scope, cwd, env))  # type: ignore[arg-type]
        except InvalidRequest:
            continue
        hooks = data.get("hooks") or {}
        if any(
            _is_ours(h)
            for groups in hooks.values()
            if isinstance(groups, list)
            for g in groups
            if isinstance(g, dict)
            for h in g.get("hooks", [])
        ):
            found.append(scope)
    return found
