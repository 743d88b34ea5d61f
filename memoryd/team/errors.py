"""Team-memory errors live in the one error tree (memoryd.base.errors); re-exported here for the team code."""

from memoryd.base.errors import EntriesCapped, GitFailed, RemoteRewritten, TeamNotConfigured

__all__ = ["EntriesCapped", "GitFailed", "RemoteRewritten", "TeamNotConfigured"]
