"""`TranscriptPipeline`: the one reader of transcripts. Each file has one durable cursor; only
the bytes appended since it are read, streamed in bounded batches, parsed once, and handed to
every subscribed consumer (extraction, session notes) in the same SQLite transaction that moves
the cursor, so a crash never loses or repeats a turn. No consumer reads a file itself.
"""

from __future__ import annotations

import gc
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from memoryd.base import limits
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.transcripts.folders import is_sidechain_path
from memoryd.transcripts.parser import Entry, parse_lines
from memoryd.transcripts.reader import ReadResult, iter_batches

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS transcript_files (
    path TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    cwd TEXT NOT NULL DEFAULT '',
    is_sidechain INTEGER NOT NULL DEFAULT 0,
    inode INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL DEFAULT 0,
    mtime REAL NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    malformed INTEGER NOT NULL DEFAULT 0,
    resets INTEGER NOT NULL DEFAULT 0,
    prose_chars INTEGER NOT NULL DEFAULT 0,
    tool_calls INTEGER NOT NULL DEFAULT 0,
    last_timestamp TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS transcript_files_session ON transcript_files(session_id);
CREATE TABLE IF NOT EXISTS transcript_seen (
    path TEXT NOT NULL,
    uuid TEXT NOT NULL,
    PRIMARY KEY (path, uuid)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS transcript_seen_batches (
    path TEXT NOT NULL,
    uuids BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS transcript_seen_batches_path ON transcript_seen_batches(path);
"""
# Entry ids seen in a file, one row per batch (a JSON array): appended, never a random B-tree insert per id,
# which cost more than parsing. `transcript_seen` holds ids stored one per row before; it is still read.
OVERSIZED_SCHEMA = "ALTER TABLE transcript_files ADD COLUMN oversized INTEGER NOT NULL DEFAULT 0"


TAIL_BYTES = 4 * limits.TRANSCRIPT_READ_BATCH_BYTES  # the end of a read that fills the consumers' newest-first budgets
RECENT_IDS_KEPT = 10_000  # entry ids remembered within one read: Claude Code writes a repeated entry close to the first


_gc_pauses = 0
_gc_lock = threading.Lock()


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic collection while a batch is folded: its thousands of entries live until it is done,
    so collections would promote them and trigger full collections of the daemon's heap (~100 ms
    each, every few batches, holding the GIL). Entries hold no cycles; refcounting frees them."""
    global _gc_pauses
    with _gc_lock:
        _gc_pauses += 1
        if _gc_pauses == 1:
            gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0:
                gc.enable()


class RecentIds:
    """Entry ids seen within one read, in two generations of RECENT_IDS_KEPT or more: at least the
    newest RECENT_IDS_KEPT are remembered and a huge first read stays bounded."""

    def __init__(self) -> None:
        self.current: set[str] = set()  # parse_lines checks both and adds here
        self.older: set[str] = set()

    def age(self) -> None:
        """After a batch: past RECENT_IDS_KEPT the current generation becomes the older one."""
        if len(self.current) > RECENT_IDS_KEPT:
            self.older, self.current = self.current, set()


@dataclass(frozen=True)
class TranscriptFile:
    """What a consumer knows of the file a batch came from."""

    path: Path
    session_id: str
    cwd: str
    is_sidechain: bool
    # False while more than TAIL_BYTES of this read follow the batch: what a consumer keeps newest first
    # (rendered turns, prompts, the notes' lists) is superseded by the tail, so it passes over such
    # content (never rendering or redacting it) and only counts. A crash mid-read resumes before the
    # same tail, so the kept result is the same.
    in_tail: bool = True


class TurnConsumer(Protocol):
    """Receives each new batch of parsed entries once, inside the cursor's transaction: whatever
    it records in `db` commits together with the cursor move (or not at all). After the file was
    rewritten, the first batch has `reset` set and the file is read from its start: entries seen
    before are flagged `replayed`."""

    def consume(self, db: sqlite3.Connection, file: TranscriptFile, entries: list[Entry], reset: bool) -> None: ...


@dataclass
class Advance:
    """What one `advance` read: totals over its batches."""

    path: str
    lines: int = 0
    malformed: int = 0
    oversized: int = 0
    entries: int = 0
    reset: bool = False
    offset: int = 0
    bytes_read: int = 0
    error: str = ""
    busy: bool = False  # another call was reading the file (advance(blocking=False) did not wait)


class TranscriptPipeline:
    """One cursor per transcript, one parse per line, every consumer fed in order."""

    def __init__(
        self,
        *,
        state: StateDB,
        metrics: Metrics,
        clock: Callable[[], float] = time.time,
        batch_bytes: int = limits.TRANSCRIPT_READ_BATCH_BYTES,
        tail_bytes: int = TAIL_BYTES,
    ) -> None:
        self.state = state
        self.metrics = metrics
        self.clock = clock  # epoch seconds: a cursor's updated_at (what pruning compares)
        self.batch_bytes, self.tail_bytes = batch_bytes, tail_bytes
        state.migrate("transcript_files", SCHEMA)
        columns = {r["name"] for r in state.query("PRAGMA table_info(transcript_files)")}
        if "oversized" not in columns:
            state.execute(OVERSIZED_SCHEMA)
        self.consumers: list[TurnConsumer] = []
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self.bytes_read = 0

    def subscribe(self, consumer: TurnConsumer) -> None:
        self.consumers.append(consumer)

    def _lock_for(self, path: Path) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(str(path), threading.Lock())

    def row(self, path: Path) -> dict[str, Any] | None:
        row = self.state.query_one("SELECT * FROM transcript_files WHERE path = ?", (str(path),))
        return dict(row) if row else None

    def advance(self, path: Path, *, blocking: bool = True, timeout: float = -1) -> Advance:
        """Read what was appended to `path` since its cursor and feed it to every consumer.
        Concurrent calls for one file run one after the other; the second finds nothing new, from
        the file's stat alone (it does not open the file again). `blocking=False`: when another
        call is reading the file, return at once (`busy`) instead of waiting for it; `timeout`: wait at most this
        long."""
        lock = self._lock_for(path)
        if not (lock.acquire(timeout=timeout) if blocking else lock.acquire(blocking=False)):
            return Advance(path=str(path), busy=True)
        try:
            row = self.row(path)
            total = Advance(path=str(path), offset=int(row["offset"]) if row else 0)
            if row is not None and self.unchanged(path, row):
                return total
            seen = RecentIds()  # within this read: Claude Code may write an entry twice
            before: set[str] = set()  # entries of the file as it was before a rewrite
            try:
                for batch in iter_batches(
                    path, total.offset, int(row["inode"]) if row else None, batch_bytes=self.batch_bytes
                ):
                    if batch.reset and row is not None:
                        before = self._seen_ids(path)
                    with _gc_paused():
                        row = self._fold(
                            path, row, batch, seen, before, total, in_tail=batch.size - batch.end <= self.tail_bytes
                        )
            except OSError as exc:
                log.warning("cannot read transcript %s (%s)", path, exc.__class__.__name__)
                self.metrics.transcript_lines.labels("unreadable").inc()
                total.error = exc.__class__.__name__
            return total
        finally:
            lock.release()

    @staticmethod
    def unchanged(path: Path, row: dict[str, Any]) -> bool:
        """Whether the file is as its cursor left it, read to its end (one stat, no open)."""
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (st.st_ino, st.st_size, st.st_mtime) == (
            int(row["inode"]),
            int(row["size"]),
            float(row["mtime"]),
        ) and int(row["offset"]) == st.st_size

    def _seen_ids(self, path: Path) -> set[str]:
        """Every entry id read from `path` before (to flag what a rewritten file repeats)."""
        ids = {r["uuid"] for r in self.state.query("SELECT uuid FROM transcript_seen WHERE path = ?", (str(path),))}
        for r in self.state.query("SELECT uuids FROM transcript_seen_batches WHERE path = ?", (str(path),)):
            ids.update(orjson.loads(r["uuids"]))
        return ids

    def _fold(
        self,
        path: Path,
        row: dict[str, Any] | None,
        batch: ReadResult,
        seen: RecentIds,
        before: set[str],
        total: Advance,
        *,
        in_tail: bool = True,
    ) -> dict[str, Any]:
        """Parse one batch, hand it to the consumers and move the cursor, in one transaction."""
        entries, malformed = parse_lines(batch.lines, seen.current, seen.older)
        seen.age()
        prose_chars = tool_calls = 0
        ids: list[str] = []
        for e in entries:  # one pass for the cursor row's totals, the ids kept and the rewrite flag
            prose_chars += len(e.text)
            tool_calls += len(e.tool_uses)
            if e.uuid:
                ids.append(e.uuid)
                if before and e.uuid in before:
                    e.replayed = True
        fresh = row is None or batch.reset
        session_id = next((e.session_id for e in entries if e.session_id), "") or (
            row["session_id"] if row else path.stem
        )
        cwd = next((e.cwd for e in reversed(entries) if e.cwd), "") or (row["cwd"] if row else "")
        last_ts = next((e.timestamp for e in reversed(entries) if e.timestamp), "") or (
            row["last_timestamp"] if row else ""
        )
        file = TranscriptFile(path, session_id, cwd, is_sidechain_path(path), in_tail)
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = 0.0
        base = {
            k: 0 if fresh or row is None else int(row[k])
            for k in ("lines", "malformed", "oversized", "prose_chars", "tool_calls")
        }
        values = {
            "path": str(path),
            "session_id": session_id,
            "cwd": cwd,
            "is_sidechain": int(file.is_sidechain),
            "inode": batch.inode,
            "offset": batch.end,
            "size": batch.size,
            "mtime": mtime,
            "lines": base["lines"] + len(batch.lines),
            "malformed": base["malformed"] + malformed,
            "oversized": base["oversized"] + batch.oversized,
            "resets": (int(row["resets"]) if row else 0) + int(batch.reset),
            "prose_chars": base["prose_chars"] + prose_chars,
            "tool_calls": base["tool_calls"] + tool_calls,
            "last_timestamp": last_ts,
            "updated_at": self.clock(),
        }
        with self.state.transaction() as db:
            for consumer in self.consumers:
                consumer.consume(db, file, entries, batch.reset and row is not None)
            db.execute(
                f"INSERT OR REPLACE INTO transcript_files({', '.join(values)}) VALUES "
                f"({', '.join('?' for _ in values)})",
                tuple(values.values()),
            )
            if ids:
                db.execute(
                    "INSERT INTO transcript_seen_batches(path, uuids) VALUES (?, ?)", (str(path), orjson.dumps(ids))
                )
        self._count(batch, len(entries), malformed, total)
        return values

    def _count(self, batch: ReadResult, entries: int, malformed: int, total: Advance) -> None:
        """A folded batch in the metrics, the advance's totals and the bytes read."""
        ok = len(batch.lines) - malformed
        self.metrics.transcript_lines.labels("ok").inc(ok)
        if malformed:
            self.metrics.transcript_lines.labels("malformed").inc(malformed)
        if batch.oversized:
            self.metrics.transcript_lines.labels("oversized").inc(batch.oversized)
        total.lines += len(batch.lines)
        total.malformed += malformed
        total.oversized += batch.oversized
        total.entries += entries
        total.reset = total.reset or batch.reset
        total.bytes_read += batch.end - batch.start
        total.offset = batch.end
        self.bytes_read += batch.end - batch.start

    def forget_older_than(self, cutoff: float) -> int:
        """Drop the cursors and seen ids of transcripts untouched since `cutoff` (Claude Code deletes them after 30
        days)."""
        with self.state.transaction() as db:
            for table in ("transcript_seen", "transcript_seen_batches"):
                db.execute(
                    f"DELETE FROM {table} WHERE path IN (SELECT path FROM transcript_files WHERE updated_at < ? AND "
                    "mtime < ?)",
                    (cutoff, cutoff),
                )
            return db.execute(
                "DELETE FROM transcript_files WHERE updated_at < ? AND mtime < ?", (cutoff, cutoff)
            ).rowcount
