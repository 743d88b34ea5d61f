"""The one error tree. Each error has a stable `code`, an HTTP `status`, and a message
that names the fix. The API (routes and middleware) and the CLI map this tree; nothing else
invents errors (private control-flow exceptions inside one module aside).

* MemorydError
  x InvalidRequest (400)        malformed input the caller can correct
    + InvalidFilename           a memory filename that is not `<type>_<slug>.md`
    + InvalidCwd                `cwd` missing or not absolute
    + InvalidPattern            an empty, catch-all or unsafe search pattern
    + InvalidSessionId          a session id that is not the agent's id
    + InvalidPath               a path with a NUL, a lone surrogate or an over-long component
    + InvalidText               text with a lone surrogate or a NUL
  x Unauthorized (401)          missing or wrong bearer token
  x Forbidden (403)             a path outside what memoryd may read, or a foreign Host/Origin
  x NotFound (404)
    + MemoryNotFound / JobNotFound / SessionNotFound / RunNotFound / ReviewItemNotFound
    + TeamNotConfigured         a project's team folder has no git remote yet
  x Conflict (409)              the operation collides with one already running
    + LockHeld / GatesClosed
    + RemoteRewritten           the team remote was force-pushed since the last sync
    + ReadOnly                  memoryd runs read-only (`[memory] read_only = true`)
  x RequestTooLarge (413)       body over REQUEST_MAX_BYTES
  x Unprocessable (422)         well-formed but refused content
    + InvalidMemory             unknown type, empty or oversized fields
    + InvalidFrontmatter        a hand-edited file whose YAML does not parse
    + SecretDetected            content holding a credential
    + EntriesCapped             a new team memory past `[team] max_entries`
  x ServiceUnavailable (503)
    + QueueFull                 the extraction queue is full
    + LLMUnavailable            the LLM failed, timed out or answered garbage
    + TokenBudgetExceeded       the daily LLM token cap is reached
    + GitFailed                 a git command failed (remote unreachable, or git refused)
  x ConfigError                 a config file or setting memoryd cannot use (at start, not over HTTP)
  x ApiError                    client side: the API answered an error (carries its status and code)
  x DaemonNotRunning            client side: nothing answers at the daemon's address
    x NotMemoryd                client side: what answers there does not prove it is this home's memoryd
  x ServiceManagerFailed        client side: systemctl or launchctl refused (`memoryd install-service`)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class MemorydError(Exception):
    """Base of every error memoryd raises on purpose."""

    status = 500
    code = "internal_error"
    client_side = False  # True for the client's own errors, which the API never answers

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None) -> None:
        """`code`/`status` override the class's for one instance (the web layer's framework errors)."""
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status


class InvalidRequest(MemorydError):
    """Raised for malformed input the caller can correct."""

    status = 400
    code = "invalid_request"


class InvalidFilename(InvalidRequest):
    """Raised when a memory filename is not `<type>_<slug>.md` inside the memory dir."""

    code = "invalid_filename"


class InvalidCwd(InvalidRequest):
    """Raised when `cwd` is missing or not an absolute path."""

    code = "invalid_cwd"


class InvalidPattern(InvalidRequest):
    """Raised when a transcript search pattern is empty, catch-all, malformed or unsafe."""

    code = "invalid_pattern"


class InvalidSessionId(InvalidRequest):
    """Raised when a session id is empty or has characters an agent's session id never has."""

    code = "invalid_session_id"


class InvalidPath(InvalidRequest):
    """Raised when a path holds a NUL, a lone surrogate, or a component the filesystem cannot store."""

    code = "invalid_path"


class InvalidText(InvalidRequest):
    """Raised when text holds a lone surrogate (not valid Unicode, so not storable as UTF-8)."""

    code = "invalid_text"


class Unauthorized(MemorydError):
    """Raised when the bearer token is missing or wrong."""

    status = 401
    code = "unauthorized"


class Forbidden(MemorydError):
    """Raised when a request names a path memoryd may not read."""

    status = 403
    code = "forbidden"


class NotFound(MemorydError):
    """Raised when the named thing does not exist."""

    status = 404
    code = "not_found"


class MemoryNotFound(NotFound):
    """Raised when no memory file has that name."""

    code = "memory_not_found"


class JobNotFound(NotFound):
    """Raised when no job has that id."""

    code = "job_not_found"


class SessionNotFound(NotFound):
    """Raised when memoryd knows nothing of that session id."""

    code = "session_not_found"


class RunNotFound(NotFound):
    """Raised when no consolidation run has that id."""

    code = "run_not_found"


class Conflict(MemorydError):
    """Raised when the operation collides with one already running."""

    status = 409
    code = "conflict"


class ReadOnly(Conflict):
    """Raised on a memory write while memoryd runs read-only (`[memory] read_only = true`)."""

    code = "read_only"


class ReviewItemNotFound(NotFound):
    """Raised when the review queue holds no pending memory with that id."""

    code = "review_item_not_found"


class LockHeld(Conflict):
    """Raised when another process (or run) holds the dream's `.consolidate-lock`."""

    code = "lock_held"


class GatesClosed(Conflict):
    """Raised when an unforced dream is asked for while one of gates 1-3 is closed."""

    code = "dream_gates_closed"


class RequestTooLarge(MemorydError):
    """Raised when a request body is over the limit."""

    status = 413
    code = "request_too_large"


class Unprocessable(MemorydError):
    """Raised for well-formed content that memoryd refuses."""

    status = 422
    code = "unprocessable"


class InvalidMemory(Unprocessable):
    """Raised for an unknown type or an empty or oversized field."""

    code = "invalid_memory"


class InvalidFrontmatter(Unprocessable):
    """Raised when a memory file's YAML frontmatter does not parse."""

    code = "invalid_frontmatter"


class SecretDetected(Unprocessable):
    """Raised when content holds a credential; the message names its kind and place, never its value."""

    code = "secret_detected"


class ServiceUnavailable(MemorydError):
    """Raised when a dependency of the request is down."""

    status = 503
    code = "service_unavailable"


class QueueFull(ServiceUnavailable):
    """Raised when the extraction queue holds EXTRACT_QUEUE_MAX jobs."""

    code = "queue_full"


class LLMUnavailable(ServiceUnavailable):
    """Raised when the LLM call fails, times out, or answers something unusable."""

    code = "llm_unavailable"


class TokenBudgetExceeded(ServiceUnavailable):
    """Raised when the daily LLM token cap is reached; background work stops until tomorrow."""

    code = "token_budget_exceeded"


def field_problems(errors: Sequence[Any]) -> str:
    """Pydantic errors as `'name' is required; 'type': Input should be ...`, never echoing the input.
    FastAPI's leading location (`body`, `query`, `path`) is dropped; a field of that name (MCP's `body`) is kept."""
    parts = []
    for e in errors[:5]:
        where = tuple(e.get("loc", ()))
        where = where[1:] if len(where) > 1 and where[0] in ("body", "query", "path") else where
        loc = ".".join(str(p) for p in where)
        if e.get("type") == "missing":
            parts.append(f"'{loc}' is required")
        else:
            parts.append(f"'{loc}': {e.get('msg', 'invalid')}")
    return "; ".join(parts)


class ConfigError(MemorydError):
    """Raised when the config file or a MEMORYD_* setting cannot be used; names the file and the fix."""

    status = 500
    code = "config_error"


class ApiError(MemorydError):
    """Raised by the client (memoryd/client.py) for an error answer of the API; carries its code and message."""

    client_side = True

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message, code=code, status=status)

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"


class DaemonNotRunning(MemorydError):
    """Raised by the client when nothing answers at the daemon's address."""

    client_side = True
    code = "daemon_not_running"

    def __init__(self, url: str) -> None:
        super().__init__(
            f"memoryd is not running at {url}; start it with `memoryd setup` (or `memoryd serve` in a terminal)."
        )
        self.url = url


class NotMemoryd(DaemonNotRunning):
    """Raised by the client when the program at the daemon's address does not prove it holds this home's token."""

    code = "not_memoryd"

    def __init__(self, url: str, seen: str) -> None:
        port = url.rsplit(":", 1)[-1]
        MemorydError.__init__(
            self,
            f"something other than memoryd answers on port {port} at {url} ({seen}); it did not prove it is this "
            "home's memoryd, so nothing was sent to it. Stop that program, or give memoryd another port: set "
            "[server] port in config.toml (`memoryd config`) or MEMORYD_PORT, then start memoryd again. If it is "
            "memoryd with another token, unset MEMORYD_TOKEN or restart the daemon.",
        )
        self.url = url


class TeamNotConfigured(NotFound):
    """Raised when a project's team folder is tied to no git remote yet."""

    code = "team_not_configured"


class EntriesCapped(Unprocessable):
    """Raised when a new team memory would pass `[team] max_entries`."""

    code = "entries_capped"


class RemoteRewritten(Conflict):
    """Raised when the remote branch no longer contains what memoryd last synced (a force-push)."""

    code = "remote_rewritten"


class GitFailed(ServiceUnavailable):
    """Raised when a git command fails: the remote is unreachable, or git refused."""

    code = "git_failed"


class ServiceManagerFailed(MemorydError):
    """Raised by `memoryd install-service` when systemctl or launchctl refuses; the unit file stays written."""

    client_side = True
    code = "service_manager_failed"
