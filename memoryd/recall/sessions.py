"""`SessionLedger`: per session, which memories recall already surfaced and how many bytes it
spent. Kept in SQLite so it survives a restart; a session idle for the TTL is forgotten."""

from __future__ import annotations

import time
from collections.abc import Callable

from memoryd.base import limits
from memoryd.base.state_db import StateDB

SCHEMA = """
CREATE TABLE IF NOT EXISTS recall_sessions (
    session_id TEXT PRIMARY KEY,
    bytes_used INTEGER NOT NULL DEFAULT 0,
    last_seen REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS recall_sessions_last_seen ON recall_sessions(last_seen);
CREATE TABLE IF NOT EXISTS recall_surfaced (
    session_id TEXT NOT NULL,
    memory_dir TEXT NOT NULL,
    filename TEXT NOT NULL,
    surfaced_at REAL NOT NULL,
    PRIMARY KEY (session_id, memory_dir, filename)
);
"""


class SessionLedger:
    """The seeds' `alreadySurfaced` set and `sessionMemoryBytes`, per session id."""

    def __init__(
        self,
        state: StateDB,
        *,
        ttl_hours: float = limits.RECALL_SESSION_TTL_HOURS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.state = state
        self.ttl_seconds = ttl_hours * 3600
        self.clock = clock
        self._expired_at: float | None = None
        state.migrate("recall_sessions", SCHEMA)

    def expire(self) -> int:
        """Forget sessions idle longer than the TTL, at most once a `RECALL_SESSION_EXPIRE_EVERY_SECONDS`
        (each recall asks; a write per recall queued recalls behind each other); returns how many."""
        now = self.clock()
        if self._expired_at is not None and 0 <= now - self._expired_at < limits.RECALL_SESSION_EXPIRE_EVERY_SECONDS:
            return 0
        self._expired_at = now
        cutoff = now - self.ttl_seconds
        with self.state.transaction() as conn:
            old = [r[0] for r in conn.execute("SELECT session_id FROM recall_sessions WHERE last_seen < ?", (cutoff,))]
            for sid in old:
                conn.execute("DELETE FROM recall_surfaced WHERE session_id = ?", (sid,))
                conn.execute("DELETE FROM recall_sessions WHERE session_id = ?", (sid,))
        return len(old)

    def bytes_used(self, session_id: str) -> int:
        row = self.state.query_one("SELECT bytes_used FROM recall_sessions WHERE session_id = ?", (session_id,))
        return int(row["bytes_used"]) if row else 0

    def surfaced(self, session_id: str, memory_dir: str) -> set[str]:
        rows = self.state.query(
            "SELECT filename FROM recall_surfaced WHERE session_id = ? AND memory_dir = ?", (session_id, memory_dir)
        )
        return {r["filename"] for r in rows}

    def record(self, session_id: str, memory_dir: str, filenames: list[str], nbytes: int) -> int:
        """Add surfaced memories and their bytes to the session; returns the new total."""
        now = self.clock()
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO recall_sessions(session_id, bytes_used, last_seen) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET bytes_used = bytes_used + "
                "excluded.bytes_used, last_seen = excluded.last_seen",
                (session_id, nbytes, now),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO recall_surfaced(session_id, memory_dir, filename, "
                "surfaced_at) VALUES (?, ?, ?, ?)",
                [(session_id, memory_dir, fn, now) for fn in filenames],
            )
            row = conn.execute("SELECT bytes_used FROM recall_sessions WHERE session_id = ?", (session_id,)).fetchone()
        return int(row[0])

    def count(self) -> int:
        row = self.state.query_one("SELECT COUNT(*) AS n FROM recall_sessions")
        return int(row["n"]) if row else 0
