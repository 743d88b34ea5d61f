"""One SQLite file under $MEMORYD_HOME that keeps what is costly to compute again (vectors, derivations) by (key, text
digest): opened private (0600) in WAL mode, each row dated by the day it was last read or written so rows nobody used
for CACHE_UNUSED_DAYS are dropped on open; a file that cannot be opened only costs computing again."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memoryd.base import limits
from memoryd.base.clock import SYSTEM_CLOCK, Clock

log = logging.getLogger(__name__)
T = TypeVar("T")
USED_DAY = "used_day"  # the column each row's last day of use is kept in (days since 1970-01-01, UTC)
_SECONDS_PER_DAY = 86_400
_UNUSABLE = "recall: the %s %s is unusable (%s); it is kept in memory only"  # a cache that only costs recomputing
_CHUNK = 500  # digests per statement (under SQLite's bound on parameters)


def day_number(clock: Clock) -> int:
    """Today as days since 1970-01-01 (UTC): a row read again the same day writes nothing."""
    return int(clock.time() // _SECONDS_PER_DAY)


def _open_file(path: Path | None, table_sql: str, what: str) -> sqlite3.Connection | None:
    """The cache's connection (autocommit, usable from any thread under the caller's lock), or None when `path` is
    None or unusable (`what` names the cache in the warning)."""
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        os.chmod(path, 0o600)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(table_sql)
        return conn
    except sqlite3.Error as exc:
        log.warning(_UNUSABLE, what, path, exc)
        return None


class DatedCache:
    """Payloads by (key, digest) in one table of a cache file, each row dated by the day it was last used. On open,
    rows unused for CACHE_UNUSED_DAYS (and, with `only_key`, rows of another key) are dropped. The file is shared by
    every store the daemon serves, so it never drops a row for not being in the store at hand. None as the path keeps
    nothing."""

    def __init__(
        self,
        path: Path | None,
        *,
        table: str,
        columns: tuple[str, str, str],
        what: str,
        only_key: str | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        """`columns`: the key's name, the payload's name and the payload's SQL type (e.g. ("model", "vec", "BLOB"))."""
        self._table, (self._key, self._payload, payload_type) = table, columns
        self._what, self._clock = what, clock
        self._lock = threading.Lock()
        self._conn = _open_file(
            path,
            f"CREATE TABLE IF NOT EXISTS {table} ({self._key} TEXT NOT NULL, digest BLOB NOT NULL, "
            f"{self._payload} {payload_type} NOT NULL, {USED_DAY} INTEGER NOT NULL, PRIMARY KEY ({self._key}, digest))",
            what,
        )
        if self._conn is not None:
            try:
                self._dated_and_pruned(self._conn, only_key)
            except sqlite3.Error as exc:  # a broken cache only costs computing again
                log.warning(_UNUSABLE, what, path, exc)
                self._conn.close()
                self._conn = None

    def _dated_and_pruned(self, conn: sqlite3.Connection, only_key: str | None) -> None:
        """Dates a file from before rows were dated (each row counts as used today), then drops the rows gone unused."""
        today = day_number(self._clock)
        conn.execute("BEGIN IMMEDIATE")  # another daemon opening the same file waits, then sees the column
        try:
            have = {row[1] for row in conn.execute(f"PRAGMA table_info({self._table})")}
            if missing := {self._key, "digest", self._payload} - have:
                raise sqlite3.DatabaseError(f"its table {self._table} has no column {', '.join(sorted(missing))}")
            if USED_DAY not in have:
                conn.execute(f"ALTER TABLE {self._table} ADD COLUMN {USED_DAY} INTEGER NOT NULL DEFAULT {today}")
            # unused for a month of the file's own use: a daemon that served its rows from memory for weeks, or a
            # machine left off, finds them kept (its newest row's day, not the clock, is "now")
            (newest,) = conn.execute(f"SELECT MAX({USED_DAY}) FROM {self._table}").fetchone()
            now = today if newest is None else min(today, newest)
            conn.execute(f"DELETE FROM {self._table} WHERE {USED_DAY} < ?", (now - limits.CACHE_UNUSED_DAYS,))
            if only_key is not None:
                conn.execute(f"DELETE FROM {self._table} WHERE {self._key} != ?", (only_key,))
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._compacted(conn)

    def _compacted(self, conn: sqlite3.Connection) -> None:
        """Gives back the disk a prune freed, when it is a quarter of the file or more: the file would otherwise keep
        its peak size. Another daemon holding it only leaves that for the next open."""
        (free,) = conn.execute("PRAGMA freelist_count").fetchone()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        if free < limits.CACHE_VACUUM_MIN_FREE_PAGES or free * 4 < pages:
            return
        try:
            conn.execute("VACUUM")
        except sqlite3.Error as exc:
            log.info("recall: the %s was not compacted (%s); the next open tries again", self._what, exc)

    def get_many(self, key: str, digests: list[bytes], decode: Callable[[Any], T]) -> dict[bytes, T]:
        """The kept payloads of these digests, decoded; the rows not yet marked today are marked used."""
        if self._conn is None or not digests:
            return {}
        today, out, unmarked = day_number(self._clock), {}, []
        with self._lock:
            for i in range(0, len(digests), _CHUNK):
                chunk = digests[i : i + _CHUNK]
                rows = self._conn.execute(
                    f"SELECT digest, {self._payload}, {USED_DAY} FROM {self._table} "
                    f"WHERE {self._key} = ? AND digest IN ({','.join('?' * len(chunk))})",
                    [key, *chunk],
                ).fetchall()
                for digest, payload, used in rows:
                    out[bytes(digest)] = decode(payload)
                    if used < today:
                        unmarked.append(digest)
            self._write(
                f"UPDATE {self._table} SET {USED_DAY} = ? WHERE {self._key} = ? AND digest = ?",
                [(today, key, d) for d in unmarked],
            )
        return out

    def put_many(self, key: str, items: list[tuple[bytes, Any]]) -> None:
        """Keeps these (digest, encoded payload) pairs, dated today."""
        if self._conn is None:
            return
        today = day_number(self._clock)
        with self._lock:
            self._write(
                f"INSERT OR REPLACE INTO {self._table} ({self._key}, digest, {self._payload}, {USED_DAY}) "
                "VALUES (?, ?, ?, ?)",
                [(key, d, payload, today) for d, payload in items],
            )

    def _write(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """`sql` for each row in one transaction (under the lock); a failure is logged: a row not kept is computed
        again, one not marked is at worst dropped early."""
        if self._conn is None or not rows:
            return
        try:
            self._conn.execute("BEGIN")
            self._conn.executemany(sql, rows)
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            log.warning("recall: could not write %d rows of the %s (%s)", len(rows), self._what, exc)
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
