"""The JSON Schema of each command's `--json` output (`memoryd COMMAND --json-schema`), and of
the one error shape every command prints on failure. The contract test validates real output."""

from __future__ import annotations

from typing import Any

S, I, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}
TIME = {"type": "string", "format": "date-time"}


def opt(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def arr(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def obj(required: dict[str, Any], *, extra: bool = True) -> dict[str, Any]:
    """An object with these keys required; `extra`: more keys may appear (status grows with the daemon)."""
    return {"type": "object", "properties": required, "required": list(required), "additionalProperties": extra}


ERROR = obj({"error": obj({"code": S, "message": S}, extra=False)}, extra=False)

MEMORY = obj({"version": S, "filename": S, "name": S, "description": S, "type": S, "body": S, "mtime": TIME, "created": S, "modified": S})
HEADER = obj({"filename": S, "name": S, "description": S, "type": S, "mtime": TIME})
GATE = obj({"name": S, "passes": B, "value": opt(N), "threshold": opt(N), "unit": {"enum": ["hours", "seconds", "sessions", "pid", ""]}, "detail": S}, extra=False)
RUN = obj({"run_id": S, "status": S, "forced": B, "method": opt(S), "started_at": opt(TIME), "finished_at": opt(TIME),
           "changes": arr(obj({"op": S, "filename": S})), "notes": arr(S), "error": opt(S), "undone_at": opt(TIME)})
CHECK = obj({"name": S, "ok": B, "detail": S, "fix": S}, extra=False)
HOOKS_RESULT = obj({"path": S, "changed": B, "backup": opt(S)})

SCHEMAS: dict[str, dict[str, Any]] = {
    "status": obj({"version": S, "mode": {"enum": ["llm", "offline"]}, "model": opt(S), "uptime_seconds": N, "pid": I, "home": S,
                   "memory_dirs": arr(S), "watched_folders": {"type": "object"}, "llm_usage": {"type": "object"}}),
    "stop": obj({"stopped": {"const": True}, "pid": I}, extra=False),
    "install-service": obj({"manager": {"enum": ["systemd", "launchd"]}, "path": S, "unit": S, "dry_run": B, "config_added": arr(S),
                            "secrets_file": opt(S), "secrets": arr(S), "commands": arr(S), "ran": arr(S)}, extra=False),
    "uninstall-service": obj({"manager": {"enum": ["systemd", "launchd"]}, "path": S, "dry_run": B, "installed": B, "commands": arr(S),
                              "ran": arr(S), "failed": arr(S), "removed": arr(S)}, extra=False),
    "save": {**MEMORY, "properties": {**MEMORY["properties"], "path": S, "new": B}, "required": [*MEMORY["required"], "path", "new"]},
    "list": obj({"memories": arr(HEADER), "total": I, "offset": I, "invalid": arr(obj({"filename": S, "error": S}))}),
    "show": MEMORY,
    "forget": obj({"deleted": S}, extra=False),
    "index": obj({"memory_dir": S, "content": S, "truncated": B, "lines": I, "bytes": I}),
    "prompt": obj({"text": S}),
    "recall": obj({"memories": arr(obj({"filename": S, "name": S, "type": S, "description": S, "content": S, "age_days": I})),
                   "injection": S, "method": {"enum": ["llm", "local", "skipped"]}, "budget_used_bytes": I, "reason": S,
                   "scores": {"type": "object", "additionalProperties": N}}),
    "dream status": obj({"memory_dir": S, "enabled": B, "gates": arr(GATE), "last_run": opt(RUN),
                         "running": opt(obj({"run_id": S, "phase": S, "files_touched": arr(S)})), "next_check": opt(TIME)}),
    "dream run": {"anyOf": [obj({"run_id": S}, extra=False), RUN], "description": "{run_id} at once; the finished run with --wait."},
    "dream cancel": obj({"cancelled": B}),
    "dream runs": obj({"runs": arr(RUN)}, extra=False),
    "dream undo": obj({"run_id": S, "restored": arr(S)}),
    "hooks": {"anyOf": [obj({"hooks": {"type": "object"}}, extra=False), {**HOOKS_RESULT, "properties": {**HOOKS_RESULT["properties"], "events": arr(S)}}, HOOKS_RESULT],
              "description": "the hooks block; with --install or --uninstall, what changed in the settings file."},
    "doctor": obj({"ok": B, "checks": arr(CHECK)}, extra=False),
    "grep": obj({"pattern": S, "regex": B, "scope": {"enum": ["project", "all"]}, "truncated": B, "reason": S, "files_scanned": I,
                 "bytes_scanned": I, "count": I,
                 "results": arr(obj({"session_id": S, "file": S, "line": I, "timestamp": S, "role": S, "snippet": S}))}),
    "backfill": obj({"transcripts": I, "jobs_queued": I}),
    "setup": obj({"dry_run": B, "steps": arr(obj({"step": S, "action": {"enum": ["done", "already", "would", "skipped", "failed"]}, "detail": S})),
                  "doctor": opt(obj({"ok": B, "failed": arr(CHECK), "checks": I}, extra=False))}, extra=False),
    "config": obj({"path": S, "exists": B, "settings": arr(obj({"setting": S, "value": {}, "source": S}, extra=False))}, extra=False),
    "config init": obj({"path": S, "written": {"const": True}}, extra=False),
}


def schema_for(command: str, exit_codes: dict[int, str]) -> dict[str, Any]:
    """The command's success schema and the shared error schema, with the exit codes the CLI uses."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"memoryd {command} --json",
        "anyOf": [SCHEMAS.get(command, {"description": "no JSON output"}), ERROR],
        "exit_codes": {str(k): v for k, v in exit_codes.items()},
    }
