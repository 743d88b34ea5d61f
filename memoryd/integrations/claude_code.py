"""Claude Code: hook JSON in → hook answer out, and the hooks block for its settings files.

Decisions stay in the core (recall, extraction, session memory); this module only adapts
formats, fits text into Claude Code's 10,000-char context cap, and fails open: any error
answers `{}` so the agent is never stalled or blocked (never `decision: block`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping

from memoryd import limits
from memoryd.errors import InvalidRequest, MemorydError
from memoryd.integrations.claude_memory import NativeMemory, is_claude_memory_dir, native_memory
from memoryd.store.files import atomic_write
from memoryd.store.prompt import build_memory_prompt
from memoryd.transcripts.context import SessionContext

if TYPE_CHECKING:
    from memoryd.daemon import Daemon

log = logging.getLogger(__name__)

HOOK_PATH = "/v1/hooks/claude-code"
# The session's own switches for native memory travel in this header (the daemon's env is not the session's).
SESSION_ENV_HEADER = "X-Claude-Code-Env"
SESSION_ENV_VARS = ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_SIMPLE")
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


# ---------------------------------------------------------------------- hook answers
def _context(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def fit_session_context(prompt: str, cap: int = limits.CLAUDE_CODE_CONTEXT_MAX_CHARS) -> str:
    """Fit the memory section into the cap: whole index lines, most useful first (the index is
    already ordered so), then a pointer to `memoryd index` for the rest."""
    text = f"{limits.INJECTED_MARKER}\n{prompt.strip()}\n"
    if len(text) <= cap:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    size = 0
    dropped = 0
    reserve = 120
    for line in lines:
        if size + len(line) + 1 > cap - reserve:
            dropped += 1
            continue
        kept.append(line)
        size += len(line) + 1
    kept.append(f"[{dropped} more index lines not shown: run `memoryd index` (or GET /v1/index) to see the whole index.]")
    return "\n".join(kept)[:cap]


def session_notes_context(notes: str, cap: int = limits.SESSION_NOTES_CONTEXT_MAX_CHARS) -> str:
    """The session's notes as the head of the post-compaction context, cut to `cap` on a line."""
    head = f"{limits.INJECTED_MARKER}\nSession notes kept by memoryd before this compaction:\n\n"
    body = notes.strip()
    if len(head) + len(body) + 1 > cap:
        body = body[: max(0, cap - len(head) - 40)].rsplit("\n", 1)[0] + "\n[… notes cut: GET /v1/sessions/{id}/memory]"
    return f"{head}{body}\n"


def _session_notes(daemon: "Daemon", session_id: str) -> str | None:
    """The session's notes; None when there are none or the id is not one memoryd accepts."""
    try:
        return daemon.session_memory.get(session_id) if session_id else None
    except MemorydError:
        return None


def parse_session_env(header: str | None) -> dict[str, str] | None:
    """`NAME=value;NAME=value` from the hook's header; None when the hook sent none (older install)."""
    if header is None:
        return None
    pairs = (part.split("=", 1) for part in header.split(";") if "=" in part)
    return {k.strip(): v.strip() for k, v in pairs if k.strip() in SESSION_ENV_VARS}


def native_for_session(cwd: str, session_env: Mapping[str, str] | None, env: Mapping[str, str] | None = None) -> NativeMemory:
    """Claude Code's own auto memory for the session that sent a hook (its cwd, its switches)."""
    env = dict(os.environ) if env is None else env
    return native_memory(Path(cwd), env, session_env)


def native_loads_index(store_path: Path, cwd: str, session_env: Mapping[str, str] | None) -> bool:
    """Does Claude Code itself load this MEMORY.md into the session (native memory on, same dir)?"""
    env = dict(os.environ)
    return native_for_session(cwd, session_env, env).enabled and is_claude_memory_dir(store_path, cwd, env)


def _session_context(daemon: "Daemon", store: Any, payload: dict[str, Any], session_id: str) -> SessionContext | None:
    """What the transcript pipeline learned of the session (its files, commands, the memory files
    it already holds); the held memories are marked surfaced, so recall adds only new ones. The
    transcript is never re-read here: the pipeline reads each line once (issue #27)."""
    transcript = payload.get("transcript_path")
    path = None
    if transcript:
        try:
            path = daemon.transcripts.check_under_root(str(transcript))
        except MemorydError:
            path = None
    context = daemon.transcripts.session_context(session_id, path)
    held = context.held_in(store.path) if context is not None else set()
    if held - daemon.recall.ledger.surfaced(session_id, str(store.path)):
        daemon.recall.ledger.record(session_id, str(store.path), sorted(held), 0)
    return context


def handle_hook(daemon: "Daemon", payload: dict[str, Any], session_env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Answer one Claude Code hook; `{}` when there is nothing to add or anything fails.

    When Claude Code's native memory is on and reads the same dir, it already loads MEMORY.md:
    SessionStart then adds nothing, so the index reaches the model once."""
    event = str(payload.get("hook_event_name", ""))
    cwd = str(payload.get("cwd") or "")
    session_id = str(payload.get("session_id") or "")
    try:
        if event == "SessionStart" and cwd:
            store = daemon.stores.for_cwd(cwd)
            notes = _session_notes(daemon, session_id) if payload.get("source") == "compact" else None
            if native_loads_index(store.path, cwd, session_env):
                return _context(event, session_notes_context(notes)) if notes else {}
            prompt = build_memory_prompt(store.path, store.served_index())
            if notes:  # right after a compaction: the session's own notes lead, so the work goes on
                head = session_notes_context(notes)
                return _context(event, head + fit_session_context(prompt, limits.CLAUDE_CODE_CONTEXT_MAX_CHARS - len(head)))
            return _context(event, fit_session_context(prompt))
        if event == "UserPromptSubmit" and cwd and session_id:
            store = daemon.stores.for_cwd(cwd)
            context = _session_context(daemon, store, payload, session_id)
            # max_chars: memories that would overflow Claude Code's cap are left for a later prompt, not marked surfaced.
            result = daemon.recall.recall(cwd, str(payload.get("prompt") or ""), session_id, store=store, max_chars=limits.CLAUDE_CODE_CONTEXT_MAX_CHARS,
                                          source="hook", context=context)
            return _context(event, result.injection) if result.injection else {}
        if event in ("Stop", "SubagentStop") and cwd and session_id and payload.get("transcript_path"):
            daemon.turns.turn_end(session_id, str(payload["transcript_path"]), cwd, payload.get("last_assistant_message"))
            return {}
        if event == "PreCompact" and session_id:
            # The installed hook discards this answer (Claude Code takes no context from PreCompact);
            # other clients may read it. Claude Code gets the notes at SessionStart(source=compact).
            notes = _session_notes(daemon, session_id)
            return _context(event, f"{limits.INJECTED_MARKER}\n{notes}"[: limits.CLAUDE_CODE_CONTEXT_MAX_CHARS]) if notes else {}
    except MemorydError as exc:
        log.warning("%s hook: %s (%s)", event or "unknown", exc.code, exc.message)
    except Exception:
        log.exception("%s hook failed; answered {} so the agent goes on", event or "unknown")
    return {}


# ---------------------------------------------------------------------- settings files
def settings_path(scope: Scope, cwd: Path, env: dict[str, str] | None = None) -> Path:
    """user: ~/.claude/settings.json ($CLAUDE_CONFIG_DIR honoured); project/local: <cwd>/.claude/."""
    env = dict(os.environ) if env is None else env
    if scope == "user":
        base = Path(env["CLAUDE_CONFIG_DIR"]).expanduser() if env.get("CLAUDE_CONFIG_DIR") else Path(env.get("HOME") or os.path.expanduser("~")) / ".claude"
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
        "headers": {"Authorization": "Bearer $MEMORYD_TOKEN", SESSION_ENV_HEADER: ";".join(f"{n}=${n}" for n in SESSION_ENV_VARS)},
        "allowedEnvVars": ["MEMORYD_TOKEN", *SESSION_ENV_VARS],
    }


def hooks_block(url: str, auth_header: Path, hook_type: HookType = "command") -> dict[str, Any]:
    """The `hooks` object for Claude Code settings. SessionStart only takes command hooks."""
    hooks: dict[str, Any] = {}
    for event in HOOK_EVENTS:
        handler = command_hook(url, auth_header, event) if hook_type == "command" or event == "SessionStart" else http_hook(url, event)
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
        raise InvalidRequest(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it by hand, then run the command again. Nothing was changed.") from exc
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
    return {"path": str(path), "changed": changed, "backup": str(backup) if backup else None, "events": sorted(block["hooks"])}


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
        if any(_is_ours(h) for groups in hooks.values() if isinstance(groups, list) for g in groups if isinstance(g, dict) for h in g.get("hooks", [])):
            found.append(scope)
    return found
