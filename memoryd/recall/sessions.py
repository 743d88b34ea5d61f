"""`SessionLedger`: per session, which memories recall already surfaced and how many bytes it
spent. Kept in SQLite so it survives a restart; a session idle for the TTL is forgotten."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

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


@dataclass
class _Known:
    bytes_used: int
    surfaced: dict[str, set[str]] = field(default_factory=dict)  # memory dir → filenames, loaded when first asked


class SessionLedger:
    """The seeds' `alreadySurfaced` set and `sessionMemoryBytes`, per session id."""

    def __init__(self, state: StateDB, *, ttl_hours: float = limits.RECALL_SESSION_TTL_HOURS, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.ttl_seconds = ttl_hours * 3600
        self.clock = clock
        self._expired_at: float | None = None
        # The last sessions' bytes and surfaced sets, written through: a recall reads them from
        # memory instead of fetching a growing set from SQLite each time (issue 31).
        self._known: OrderedDict[str, _Known] = OrderedDict()
        self._known_lock = threading.Lock()
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
        with self._known_lock:
            for sid in old:
                self._known.pop(sid, None)
        return len(old)

    def _session(self, session_id: str) -> _Known:
        """The session as known in memory, loaded once (the caller holds `_known_lock`)."""
        known = self._known.get(session_id)
        if known is None:
            row = self.state.query_one("SELECT bytes_used FROM recall_sessions WHERE session_id = ?", (session_id,))
            known = self._known[session_id] = _Known(int(row["bytes_used"]) if row else 0)
            if len(self._known) > limits.RECALL_SESSIONS_KEPT_IN_MEMORY:
                self._known.popitem(last=False)
        self._known.move_to_end(session_id)
        return known

    def bytes_used(self, session_id: str) -> int:
        with self._known_lock:
            return self._session(session_id).bytes_used

    def surfaced(self, session_id: str, memory_dir: str) -> set[str]:
        with self._known_lock:
            known = self._session(session_id)
            if memory_dir not in known.surfaced:
                rows = self.state.query("SELECT filename FROM recall_surfaced WHERE session_id = ? AND memory_dir = ?", (session_id, memory_dir))
                known.surfaced[memory_dir] = {r["filename"] for r in rows}
            return set(known.surfaced[memory_dir])

    def record(self, session_id: str, memory_dir: str, filenames: list[str], nbytes: int) -> int:
        """Add surfaced memories and their bytes to the session; returns the new total."""
        now = self.clock()
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO recall_sessions(session_id, bytes_used, last_seen) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET bytes_used = bytes_used + excluded.bytes_used, last_seen = excluded.last_seen",
                (session_id, nbytes, now),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO recall_surfaced(session_id, memory_dir, filename, surfaced_at) VALUES (?, ?, ?, ?)",
                [(session_id, memory_dir, fn, now) for fn in filenames],
            )
            row = conn.execute("SELECT bytes_used FROM recall_sessions WHERE session_id = ?", (session_id,)).fetchone()
        with self._known_lock:  # after the commit: a load that raced it read the rows with or without these, and this adds them
            known = self._known.get(session_id)
            if known is not None:
                known.bytes_used = int(row[0])
                if memory_dir in known.surfaced:
                    known.surfaced[memory_dir].update(filenames)
        return int(row[0])

    def count(self) -> int:
        row = self.state.query_one("SELECT COUNT(*) AS n FROM recall_sessions")
        return int(row["n"]) if row else 0
