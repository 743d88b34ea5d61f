"""`TranscriptService`: watches the agents' transcript folders and keeps, per transcript,
a byte cursor and session facts (cwd, activity, size) in SQLite.

The watchdog handler only queues paths; one worker thread runs `ingest(path)` for live
events and for the start-up backfill alike. It does NOT extract memories.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from memoryd.errors import Forbidden, InvalidPath
from memoryd.metrics import Metrics
from memoryd.state import StateDB
from memoryd.transcripts.parser import parse_lines
from memoryd.transcripts.reader import ReadResult, iter_batches
from memoryd.validation import check_transcript_path

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
"""


def is_sidechain_path(path: Path) -> bool:
    """Subagent transcripts (`<session>/subagents/…` or legacy `agent-*.jsonl`)."""
    return "subagents" in path.parts or path.name.startswith("agent-")


class _Handler(FileSystemEventHandler):
    def __init__(self, service: "TranscriptService") -> None:
        self.service = service

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write", "deleted"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw and str(raw).endswith(".jsonl"):
                self.service.queue_path(Path(str(raw)))


class TranscriptService:
    """Owns the observer, the ingest queue and the per-file cursors."""

    def __init__(self, *, roots: list[Path], state: StateDB, metrics: Metrics, watch: bool = True) -> None:
        self.roots = roots
        self.state = state
        self.metrics = metrics
        self.watch_enabled = watch
        state.migrate("transcript_files", SCHEMA)
        self._queue: "queue.Queue[Path | None]" = queue.Queue()
        self._pending: set[Path] = set()
        self._pending_lock = threading.Lock()
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        self._watched: list[str] = []
        self.ingested_files = 0

    # ------------------------------------------------------------------ roots
    def real_roots(self) -> list[Path]:
        return [Path(os.path.realpath(r)) for r in self.roots]

    def check_under_root(self, transcript_path: str) -> Path:
        """The realpath of a transcript that lies under a configured root; Forbidden otherwise."""
        check_transcript_path(transcript_path)
        real = Path(os.path.realpath(os.path.expanduser(transcript_path)))
        for root in self.real_roots():
            if real == root or (root in real.parents and real.is_dir()):
                raise InvalidPath(f"transcript_path {transcript_path} is a directory; pass the session's .jsonl transcript file under it.")
            if root in real.parents:
                return real
        raise Forbidden(
            f"transcript_path {transcript_path} is outside the configured transcript roots "
            f"({', '.join(map(str, self.roots))}); add its folder to [transcripts] roots in config.toml."
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._worker = threading.Thread(target=self._run, name="memoryd-transcripts", daemon=True)
        self._worker.start()
        if self.watch_enabled:
            self._observer = Observer()
            self._observer.daemon = True
            for root in self.roots:
                if root.is_dir():
                    self._observer.schedule(_Handler(self), str(root), recursive=True)
                    self._watched.append(str(root))
                else:
                    log.info("transcript root %s does not exist yet; not watched", root)
            self._observer.start()
        for path in self.changed_since_last_run():
            self.queue_path(path)

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join(timeout=10)
            self._worker = None

    def queue_path(self, path: Path) -> None:
        with self._pending_lock:
            if path in self._pending:
                return
            self._pending.add(path)
        self._queue.put(path)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            if path is None:
                return
            with self._pending_lock:
                self._pending.discard(path)
            try:
                self.ingest(path)
            except Exception:
                log.exception("ingesting %s failed", path)

    def changed_since_last_run(self) -> list[Path]:
        """Backfill: transcripts whose size or mtime differ from what was last ingested."""
        # A file whose cursor stops short of its size (ingest interrupted between batches, or a
        # partial last line) is read again too: only its tail, from the cursor.
        known = {r["path"]: (r["size"], r["mtime"]) for r in self.state.query("SELECT path, size, mtime FROM transcript_files WHERE offset >= size")}
        changed: list[Path] = []
        for root in self.roots:
            if not root.is_dir():
                continue
            for path in root.rglob("*.jsonl"):
                try:
                    st = path.stat()
                except OSError:
                    continue
                if known.get(str(path)) != (st.st_size, st.st_mtime):
                    changed.append(path)
        return changed

    # ------------------------------------------------------------------ ingest
    def ingest(self, path: Path) -> dict[str, Any]:
        """Read what was appended to `path` since its cursor and update its session facts,
        batch by batch (`iter_batches`), so a large transcript is never in memory whole."""
        row = self.state.query_one("SELECT * FROM transcript_files WHERE path = ?", (str(path),))
        total: dict[str, Any] = {"path": str(path), "lines": 0, "malformed": 0, "reset": False, "offset": int(row["offset"]) if row else 0}
        try:
            for result in iter_batches(path, total["offset"], int(row["inode"]) if row else None):
                mtime = path.stat().st_mtime
                row, lines, malformed = self._record_batch(path, row, result, mtime)
                total["lines"] += lines
                total["malformed"] += malformed
                total["reset"] = total["reset"] or result.reset
                total["offset"] = result.end
        except OSError as exc:
            log.warning("cannot read transcript %s (%s)", path, exc.__class__.__name__)
            self.metrics.transcript_lines.labels("unreadable").inc()
            return {"path": str(path), "error": exc.__class__.__name__}
        self.ingested_files += 1
        return total

    def _record_batch(self, path: Path, row: Any, result: ReadResult, mtime: float) -> tuple[Any, int, int]:
        """Fold one batch into the file's row; returns (the new row, lines, malformed)."""
        entries, malformed = parse_lines(result.lines)
        session_id = next((e.session_id for e in entries if e.session_id), "") or (row["session_id"] if row else path.stem)
        cwd = next((e.cwd for e in reversed(entries) if e.cwd), "") or (row["cwd"] if row else "")
        last_ts = next((e.timestamp for e in reversed(entries) if e.timestamp), "") or (row["last_timestamp"] if row else "")
        prose = sum(len(e.text) for e in entries)
        tools = sum(len(e.tool_uses) for e in entries)
        base_lines = 0 if (row is None or result.reset) else int(row["lines"])
        base_malformed = 0 if (row is None or result.reset) else int(row["malformed"])
        base_prose = 0 if (row is None or result.reset) else int(row["prose_chars"])
        base_tools = 0 if (row is None or result.reset) else int(row["tool_calls"])
        self.state.execute(
            "INSERT INTO transcript_files(path, session_id, cwd, is_sidechain, inode, offset, size, mtime, lines, malformed, resets, prose_chars, tool_calls, last_timestamp, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET session_id=excluded.session_id, cwd=excluded.cwd, inode=excluded.inode, offset=excluded.offset, "
            "size=excluded.size, mtime=excluded.mtime, lines=excluded.lines, malformed=excluded.malformed, resets=transcript_files.resets + excluded.resets, "
            "prose_chars=excluded.prose_chars, tool_calls=excluded.tool_calls, last_timestamp=excluded.last_timestamp, updated_at=excluded.updated_at",
            (
                str(path), session_id, cwd, int(is_sidechain_path(path)), result.inode, result.end, result.size, mtime,
                base_lines + len(result.lines), base_malformed + malformed, int(result.reset), base_prose + prose, base_tools + tools,
                last_ts, time.time(),
            ),
        )
        self.metrics.transcript_lines.labels("ok").inc(len(result.lines) - malformed)
        if malformed:
            self.metrics.transcript_lines.labels("malformed").inc(malformed)
        return self.state.query_one("SELECT * FROM transcript_files WHERE path = ?", (str(path),)), len(result.lines), malformed

    def file_state(self, path: Path) -> dict[str, Any] | None:
        row = self.state.query_one("SELECT * FROM transcript_files WHERE path = ?", (str(path),))
        return dict(row) if row else None

    def status(self) -> dict[str, Any]:
        row = self.state.query_one(
            "SELECT COUNT(*) AS files, COALESCE(SUM(lines),0) AS lines, COALESCE(SUM(malformed),0) AS malformed, COUNT(DISTINCT session_id) AS sessions FROM transcript_files"
        )
        return {
            "roots": [str(r) for r in self.roots],
            "watched": list(self._watched),
            "files": int(row["files"]) if row else 0,
            "sessions": int(row["sessions"]) if row else 0,
            "lines": int(row["lines"]) if row else 0,
            "malformed_lines": int(row["malformed"]) if row else 0,
            "queued": self._queue.qsize(),
        }
