"""Claude Code's hook protocol (events, headers) and the hooks block in its settings files.

The answers to the hooks are `claude_code_hooks.py`, beside it; this module knows only the protocol and the files.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
from pathlib import Path
from typing import Any, Literal

from memoryd.base import limits
from memoryd.base.config_files import FileRefused, read_small_file
from memoryd.base.errors import InvalidRequest
from memoryd.base.files import ABSENT, PRIVATE_FILE_MODE, Staged, TargetMoved, key_of, publish, stage
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
BACKUP_SUFFIX = ".memoryd-backup"  # settings.json.memoryd-backup: the file as it was before memoryd first changed it
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
        text = read_settings_text(path, within=within)
    except SettingsRefused as exc:
        raise InvalidRequest(f"{exc}. Nothing was changed.") from exc
    return _json_object(path, text or "")


def _json_object(path: Path, text: str | bytes) -> dict[str, Any]:
    """A settings file's object ({} when empty); text that is not UTF-8 JSON holding an object is refused by name."""
    try:
        data = json.loads((text.decode("utf-8") if isinstance(text, bytes) else text) or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" ({exc.msg} at line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise InvalidRequest(
            f"{path} is not valid JSON{where}; fix it by hand, then run the command again. Nothing was changed."
        ) from exc
    if not isinstance(data, dict):
        raise InvalidRequest(f"{path} does not hold a JSON object; fix it by hand. Nothing was changed.")
    return data


class SettingsFile:
    """A Claude Code settings file as read: its object, and the bytes and stat it came from (None: no file),
    so a rewrite keeps its mode, goes through its link and never overwrites an edit made meanwhile."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.raw, self.stat = _read_raw(path)
        self.data = _json_object(path, self.raw or b"")

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
    try:
        got = read_small_file(path, limits.SETTINGS_FILE_MAX_BYTES)
    except FileRefused as exc:
        if exc.why == "access":
            raise InvalidRequest(f"{exc}. Nothing was changed.") from exc
        raise InvalidRequest(
            f"{exc}; Claude Code reads it as a regular JSON file: move it aside (mv '{path}' '{path}.moved'), "
            f"then run the command again. Nothing was changed."
        ) from exc
    return got or (None, None)


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
            data = _read_settings(settings_path(scope, cwd, env), None if scope == "user" else cwd)
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
            data = _read_settings(settings_path(scope, cwd, env), None if scope == "user" else cwd)
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
