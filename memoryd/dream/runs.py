"""`RunRecords`: what a consolidation leaves behind. The `dream_runs` table, each run's backup
folder (every touched file's text from before the run), the undo journal, and which daily
logs a run distilled. Undo and crash recovery read only from here.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memoryd.base.clock import Clock
from memoryd.base.errors import Conflict, RunNotFound, Unprocessable
from memoryd.base.files import atomic_write, make_private_dir
from memoryd.base.secrets import check_no_secrets, redact_record
from memoryd.base.state_db import StateDB
from memoryd.dream.plan import Plan
from memoryd.store import MemoryDir
from memoryd.store.frontmatter import split_frontmatter

SCHEMA = """
CREATE TABLE IF NOT EXISTS dream_runs (
    run_id TEXT PRIMARY KEY,
    memory_dir TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    forced INTEGER NOT NULL DEFAULT 0,
    method TEXT NOT NULL DEFAULT '',
    changes TEXT NOT NULL DEFAULT '[]',
    notes TEXT NOT NULL DEFAULT '[]',
    error TEXT NOT NULL DEFAULT '',
    undone_at REAL
);
CREATE INDEX IF NOT EXISTS dream_runs_dir ON dream_runs(memory_dir, started_at);
CREATE TABLE IF NOT EXISTS dream_logs (key TEXT PRIMARY KEY, processed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS dream_run_logs (run_id TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (run_id, key));
"""
# The lock's mtime before a run took it: what a crash recovery rolls it back to.
PRIOR_LOCK_COLUMN = "ALTER TABLE dream_runs ADD COLUMN prior_lock_mtime REAL NOT NULL DEFAULT 0"
UNDO_JOURNAL = "undo-started"  # in a run's backup folder while its undo is applied: a crash finishes it at start
RUN_HISTORY = 50  # runs listed per memory dir
INTERRUPTED = "interrupted (the daemon stopped mid-run); every change was rolled back from the backups"


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat() if ts else None


@dataclass(frozen=True, kw_only=True)
class DreamRun:
    """One consolidation run as recorded: how it ended, what it changed (op, filename, why), its notes, and when
    (ISO 8601 UTC times)."""

    run_id: str
    status: str
    forced: bool
    method: str
    started_at: str | None
    finished_at: str | None
    changes: list[dict[str, Any]]
    notes: list[str]
    error: str
    undone_at: str | None

    @classmethod
    def of_row(cls, row: sqlite3.Row) -> DreamRun:
        return cls(
            run_id=row["run_id"],
            status=row["status"],
            forced=bool(row["forced"]),
            method=row["method"],
            started_at=_iso(row["started_at"]),
            finished_at=_iso(row["finished_at"]),
            changes=json.loads(row["changes"]),
            notes=json.loads(row["notes"]),
            error=row["error"],
            undone_at=_iso(row["undone_at"]),
        )


@dataclass(kw_only=True, eq=False)
class RunRecords:
    state: StateDB
    backups: Path
    clock: Clock

    def __post_init__(self) -> None:
        self.state.migrate("dream", SCHEMA)
        if "prior_lock_mtime" not in {r["name"] for r in self.state.query("PRAGMA table_info(dream_runs)")}:
            self.state.execute(PRIOR_LOCK_COLUMN)

    # ------------------------------------------------------------------ the runs table
    def started(self, run_id: str, memory_dir: Path, *, forced: bool, prior_lock_mtime: float) -> None:
        self.state.execute(
            "INSERT INTO dream_runs(run_id, memory_dir, started_at, status, forced, prior_lock_mtime) VALUES (?, ?, "
            "?, 'running', ?, ?)",
            (run_id, str(memory_dir), self.clock.time(), int(forced), prior_lock_mtime),
        )

    def finished(self, run_id: str, *, status: str, plan: Plan, changes: list[dict[str, Any]], error: str) -> None:
        """Record the outcome; nothing stored holds a secret."""
        self.state.execute(
            "UPDATE dream_runs SET finished_at = ?, status = ?, method = ?, changes = ?, notes = ?, error = ? WHERE "
            "run_id = ?",
            (
                self.clock.time(),
                status,
                plan.method,
                json.dumps(redact_record(changes)),
                json.dumps(redact_record(plan.notes)),
                redact_record(error),
                run_id,
            ),
        )

    def get(self, run_id: str) -> sqlite3.Row:
        row = self.state.query_one("SELECT * FROM dream_runs WHERE run_id = ?", (run_id,))
        if row is None:
            raise RunNotFound(
                f"no consolidation run {run_id!r}; list them with GET /v1/dream/runs?cwd=… or `memoryd dream runs`."
            )
        return row

    def of(self, memory_dir: Path, limit: int = RUN_HISTORY) -> list[DreamRun]:
        """The last runs of a memory dir, newest first."""
        rows = self.state.query(
            "SELECT * FROM dream_runs WHERE memory_dir = ? ORDER BY started_at DESC LIMIT ?", (str(memory_dir), limit)
        )
        return [DreamRun.of_row(r) for r in rows]

    def left_running(self) -> list[sqlite3.Row]:
        """Runs a crash left 'running' (at start, none is really running)."""
        return self.state.query("SELECT * FROM dream_runs WHERE status = 'running'")

    def mark_interrupted(self, run_id: str) -> None:
        self.state.execute(
            "UPDATE dream_runs SET status = 'failed', finished_at = ?, error = ? WHERE run_id = ?",
            (self.clock.time(), INTERRUPTED, run_id),
        )

    # ------------------------------------------------------------------ distilled daily logs
    def processed_logs(self) -> set[str]:
        return {r["key"] for r in self.state.query("SELECT key FROM dream_logs")}

    def distilled(self, run_id: str, log_path: Path) -> None:
        """A daily log this run distilled: not distilled again unless the log changes or the run is undone."""
        key = f"{log_path}:{log_path.stat().st_mtime_ns}"
        self.state.execute(
            "INSERT OR IGNORE INTO dream_logs(key, processed_at) VALUES (?, ?)", (key, self.clock.time())
        )
        self.state.execute("INSERT OR IGNORE INTO dream_run_logs(run_id, key) VALUES (?, ?)", (run_id, key))

    # ------------------------------------------------------------------ backups
    def backup(self, run_id: str, filename: str, prior: str | None) -> None:
        """Keep a file's text from before the run's first change to it (None: the run creates it)."""
        folder = self.backups / run_id
        make_private_dir(folder)
        manifest = folder / "manifest.json"
        data = json.loads(manifest.read_text()) if manifest.exists() else {}
        if filename in data:
            return  # keep the text from before the run's first change
        data[filename] = prior
        atomic_write(manifest, json.dumps(data))  # a kill -9 mid-write must not lose the prior texts

    def manifest(self, run_id: str) -> dict[str, str | None]:
        """Each file a run touched, with its text from before the run (None: the run created it)."""
        manifest = self.backups / run_id / "manifest.json"
        return json.loads(manifest.read_text()) if manifest.exists() else {}

    def restore(self, store: MemoryDir, run_id: str) -> list[str]:
        """Put back every file the run touched (idempotent: a second pass after a crash changes nothing more)."""
        data = self.manifest(run_id)
        for filename, text in data.items():
            store.restore(filename, text, source="undo")
        return sorted(data)

    # ------------------------------------------------------------------ undo
    def check_undoable(self, row: sqlite3.Row) -> None:
        if row["undone_at"]:
            raise Conflict(f"run {row['run_id']} was already undone.")
        if row["status"] not in ("done", "failed", "cancelled"):
            raise Conflict(f"run {row['run_id']} is {row['status']}; cancel it first (memoryd dream cancel).")

    def undo(self, store: MemoryDir, run_id: str) -> list[str]:
        """All or nothing: every prior text is checked first (a refusal changes nothing); a journal
        marks the undo as begun, so a crash part-way is finished at the next start."""
        folder = self.backups / run_id
        self._check_restorable(run_id)
        if folder.is_dir():
            atomic_write(folder / UNDO_JOURNAL, str(self.clock.time()))
        restored = self.restore(store, run_id)
        with self.state.transaction() as db:
            # The logs this run distilled count as new again, so the next run distils them anew.
            db.execute(
                "DELETE FROM dream_logs WHERE key IN (SELECT key FROM dream_run_logs WHERE run_id = ?)", (run_id,)
            )
            db.execute("DELETE FROM dream_run_logs WHERE run_id = ?", (run_id,))
            db.execute("UPDATE dream_runs SET undone_at = ? WHERE run_id = ?", (self.clock.time(), run_id))
        (folder / UNDO_JOURNAL).unlink(missing_ok=True)
        return restored

    def _check_restorable(self, run_id: str) -> None:
        """Refuse an undo before it changes anything when one of its prior texts would be refused."""
        for filename, text in self.manifest(run_id).items():
            if text is None:
                continue
            try:
                meta, body = split_frontmatter(text, source=filename)
                check_no_secrets(
                    {
                        "name": str(meta.get("name") or ""),
                        "description": str(meta.get("description") or ""),
                        "body": body,
                    }
                )
            except Unprocessable as exc:
                raise Conflict(
                    f"run {run_id} cannot be undone: the prior text of {filename} is refused ({exc.message}); nothing "
                    "was changed."
                ) from None

    def interrupted_undos(self) -> list[tuple[str, Path | None]]:
        """Undos a crash left part-way: (run id, its memory dir; None when already recorded as undone).
        The caller finishes each undo, then drops its journal."""
        out: list[tuple[str, Path | None]] = []
        for journal in sorted(self.backups.glob(f"*/{UNDO_JOURNAL}")) if self.backups.is_dir() else []:
            run_id = journal.parent.name
            row = self.state.query_one("SELECT memory_dir, undone_at FROM dream_runs WHERE run_id = ?", (run_id,))
            out.append((run_id, Path(row["memory_dir"]) if row is not None and not row["undone_at"] else None))
        return out

    def drop_journal(self, run_id: str) -> None:
        (self.backups / run_id / UNDO_JOURNAL).unlink(missing_ok=True)
