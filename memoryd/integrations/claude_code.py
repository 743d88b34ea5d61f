"""Claude Code's hook protocol (events, headers) and the hooks block in its settings files.

The answers to the hooks are `claude_code_hooks.py`, beside it; this module knows only the protocol and the files.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Literal

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest
from memoryd.base.files import (
    ABSENT,
    PRIVATE_FILE_MODE,
    NotRegularFile,
    Staged,
    TargetMoved,
    atomic_write,
    key_of,
    publish,
    read_small_file,
    stage,
)

HOOK_PATH = "/v1/hooks/claude-code"
# The session's own switches for native memory travel in this header (the daemon's env is not the session's).
SESSION_ENV_HEADER = "X-Claude-Code-Env"
SESSION_ENV_VARS = ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_SIMPLE")
AUTH_HEADER_FILENAME = "curl-auth-header"
BACKUP_SUFFIX = ".memoryd-backup"  # settings.json.memoryd-backup: the file as it was before memoryd first changed it
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


class SettingsFile:
    """A Claude Code settings file as read: its object, and the bytes and stat it came from (None: no file),
    so a rewrite keeps its mode, goes through its link and never overwrites an edit made meanwhile."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.raw, self.stat = _read_raw(path)
        try:
            data = json.loads(self.raw.decode("utf-8") or "{}") if self.raw is not None else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            where = f" ({exc.msg} at line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
            raise InvalidRequest(
                f"{path} is not valid JSON{where}; fix it by hand, then run the command again. Nothing was changed."
            ) from exc
        if not isinstance(data, dict):
            raise InvalidRequest(f"{path} does not hold a JSON object; fix it by hand. Nothing was changed.")
        self.data: dict[str, Any] = data

    def write(self, data: dict[str, Any]) -> Path | None:
        """Replace the file's object; returns the backup of the file as memoryd first found it (None: it had none).
        A link (into a dotfiles repo) stays a link and its target gets the new text; the mode stays."""
        target = Path(os.path.realpath(self.path))
        mode = stat.S_IMODE(self.stat.st_mode) if self.stat is not None else PRIVATE_FILE_MODE
        staged: list[Staged] = []
        try:
            backup = self._backup(staged) if self.raw is not None else None
            staged.append(stage(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=mode))
            staged[-1].expect = key_of(self.stat) if self.stat is not None else ABSENT
            publish(staged[-1:])
        except TargetMoved as exc:
            raise InvalidRequest(
                f"{self.path} changed while memoryd rewrote it; run the command again. Nothing was changed."
            ) from exc
        except OSError as exc:
            raise InvalidRequest(
                f"cannot write {exc.filename or target} ({exc.strerror}). Nothing was changed."
            ) from exc
        finally:
            for f in staged:
                f.discard()
        return backup

    def _backup(self, staged: list[Staged]) -> Path:
        """`<file>.memoryd-backup` beside the file (beside the link, not in the repo it points into), made once
        and whole (a synced temp file linked to its name): no later install or uninstall overwrites the original."""
        assert self.raw is not None
        backup = self.path.with_name(self.path.name + BACKUP_SUFFIX)
        if os.path.lexists(backup):
            return backup
        staged.append(stage(backup, self.raw))
        staged[-1].sync()
        try:
            os.link(staged[-1].tmp, backup)  # never replaces a name that exists, unlike a rename
        except FileExistsError:
            pass
        return backup


def _read_raw(path: Path) -> tuple[bytes | None, os.stat_result | None]:
    """A settings file's bytes, following a link; a FIFO never blocks, a directory or device is refused by name."""
    fix = f"Claude Code reads it as a regular JSON file: move it aside (mv '{path}' '{path}.moved'), then run the command again. Nothing was changed."
    try:
        raw, st = read_small_file(path, limits.SETTINGS_FILE_MAX_BYTES)
    except FileNotFoundError:
        return None, None
    except NotRegularFile as exc:
        raise InvalidRequest(f"{path} {exc.strerror}; {fix}") from exc
    except OSError as exc:
        raise InvalidRequest(f"cannot read {path} ({exc.strerror}). Nothing was changed.") from exc
    if raw is None:
        raise InvalidRequest(f"{path} is over {limits.SETTINGS_FILE_MAX_BYTES // 1024} KB; {fix}")
    return raw, st


def read_settings(path: Path) -> dict[str, Any]:
    """A settings file's object ({} when there is none); InvalidRequest names what is wrong with it and the fix."""
    return SettingsFile(path).data


def install_hooks(path: Path, block: dict[str, Any]) -> dict[str, Any]:
    """Merge memoryd's hooks into a settings file, keeping every other hook; idempotent."""
    file = SettingsFile(path)
    current = file.data
    merged = _without_ours(current)
    hooks = dict(merged.get("hooks") or {})
    for event, groups in block["hooks"].items():
        hooks[event] = list(hooks.get(event) or []) + groups
    merged["hooks"] = hooks
    changed = merged != current
    backup = file.write(merged) if changed else None
    return {
        "path": str(path),
        "changed": changed,
        "backup": str(backup) if backup else None,
        "events": sorted(block["hooks"]),
    }


def uninstall_hooks(path: Path) -> dict[str, Any]:
    file = SettingsFile(path)
    cleaned = _without_ours(file.data)
    changed = cleaned != file.data
    backup = file.write(cleaned) if changed else None
    return {"path": str(path), "changed": changed, "backup": str(backup) if backup else None}


def hooks_forward_session_env(cwd: Path, env: dict[str, str] | None = None) -> bool:
    """Do the installed SessionStart hooks send the session's native-memory switches (newer installs)?"""
    for scope in ("user", "project", "local"):
        try:
            data = read_settings(settings_path(scope, cwd, env))  # type: ignore[arg-type]
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
            data = read_settings(settings_path(scope, cwd, env))  # type: ignore[arg-type]
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
