"""Team-memory errors: leaves of memoryd's error tree (`memoryd.errors`), so the API and CLI map them."""

from __future__ import annotations

from memoryd.errors import Conflict, NotFound, ServiceUnavailable, Unprocessable


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
