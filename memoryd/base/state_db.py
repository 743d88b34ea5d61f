"""`StateDB`: the daemon's SQLite file (cursors, jobs, surfaced sets, runs, token spend).

One writing connection, one lock: every write runs serialized, which is the single-writer rule.
Reads go through a few other connections (WAL lets them run beside a write): a recall's reads no
longer queue behind other recalls' log writes (issue 31: most of a recall's time under 20 clients).
Each concept declares its own tables with `migrate(name, sql)` next to the code that uses
them; no memory body is ever stored here.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

STATE_FILENAME = "state.db"
READ_CONNECTIONS = 4  # reads running at once, beside the one writer
READ_CACHE_KIB = 1024  # each reader's page cache (SQLite's default is 2 MB a connection, filled as the file grows)


class StateDB:
    """A thread-safe wrapper over one SQLite file in WAL mode: one writing connection, a few reading ones."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        os.chmod(path, 0o600)  # job and run records name memories; SQLite gives -wal/-shm the same mode
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.execute("CREATE TABLE IF NOT EXISTS schema_parts (name TEXT PRIMARY KEY)")
        self._readers: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        for _ in range(READ_CONNECTIONS):
            reader = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
            reader.row_factory = sqlite3.Row
            reader.execute(f"PRAGMA cache_size=-{READ_CACHE_KIB}")
            self._readers.put(reader)

    def migrate(self, name: str, sql: str) -> None:
        """Run a concept's `CREATE TABLE IF NOT EXISTS …` script once per database."""
        with self._lock:
            self._conn.executescript(sql)
            self._conn.execute("INSERT OR IGNORE INTO schema_parts(name) VALUES (?)", (name,))

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one write; returns the row count."""
        with self._lock:
            return self._conn.execute(sql, params).rowcount

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        reader = self._readers.get()
        try:
            yield reader
        finally:
            self._readers.put(reader)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Rows as of the last committed write (a read never waits for a write in progress)."""
        with self._reading() as reader:
            return reader.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self._reading() as reader:
            row: sqlite3.Row | None = reader.execute(sql, params).fetchone()
            return row

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Several statements atomically: BEGIN IMMEDIATE … COMMIT (ROLLBACK on error)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        for _ in range(READ_CONNECTIONS):
            self._readers.get().close()
        with self._lock:
            self._conn.close()


R = TypeVar("R")


def from_row(record: type[R], row: sqlite3.Row, **values: Any) -> R:
    """A dataclass record from a row: each field from the column of its name, unless `values` gives it."""
    names = [f.name for f in dataclasses.fields(record) if f.name not in values]  # type: ignore[arg-type]
    return record(**{name: row[name] for name in names}, **values)
