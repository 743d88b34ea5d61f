"""`JobQueue`: extraction jobs persisted in SQLite — queued by a turn-end (or a backfill), claimed
one at a time by the worker, finished with an outcome. Knows nothing of transcripts or models."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import JobNotFound, QueueFull
from memoryd.base.secrets import redact_record, redact_secrets
from memoryd.base.state_db import StateDB, from_row

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    session_id TEXT NOT NULL,
    cwd TEXT NOT NULL,
    memory_dir TEXT NOT NULL,
    transcript_path TEXT NOT NULL,
    last_assistant_message TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    written TEXT NOT NULL DEFAULT '[]',
    refused TEXT NOT NULL DEFAULT '[]',
    attempts INTEGER NOT NULL DEFAULT 0,
    turns INTEGER NOT NULL DEFAULT 1,
    not_before REAL NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status, created_at);
CREATE INDEX IF NOT EXISTS jobs_session ON jobs(session_id, status);
CREATE TABLE IF NOT EXISTS extraction_turns (
    session_id TEXT PRIMARY KEY,
    turns_since INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL DEFAULT 0
);
"""
TURN_END, BACKFILL = "extract", "backfill"
STATUSES = ("queued", "running", "done", "skipped", "failed")


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How one extraction job ended: its status (one of STATUSES), why, the files it wrote (`review:<id>` for an
    item queued for review) and the candidates it refused (name, code, message)."""

    status: str
    reason: str
    written: list[str] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Job:
    """One claimed extraction job, as the worker runs it (a row of `jobs`; `attempts` counts this run)."""

    job_id: str
    kind: str
    session_id: str
    cwd: str
    memory_dir: str
    transcript_path: str
    last_assistant_message: str | None
    attempts: int
    turns: int
    created_at: float

    def live_event(self, outcome: Outcome) -> dict[str, Any]:
        """What the live page shows of this job once finished: saved files, items queued for review, refusals."""
        written = outcome.written
        return {
            "job_id": self.job_id,
            "session_id": self.session_id,
            "kind": self.kind,
            "turns": self.turns,
            "transcript": Path(self.transcript_path).name,
            "status": outcome.status,
            "reason": redact_secrets(outcome.reason),
            "saved": [w for w in written if not w.startswith("review:")],
            "review": [w.removeprefix("review:") for w in written if w.startswith("review:")],
            "refused": [{"name": r.get("name", ""), "code": r.get("code", "")} for r in outcome.refused],
        }


@dataclass(frozen=True, kw_only=True)
class JobRecord:
    """A job as recorded, for GET /v1/jobs/{id} and the web view's jobs page: its status and, once finished, why,
    the files written and the candidates refused."""

    job_id: str
    kind: str
    status: str
    reason: str
    memories_written: list[str]
    refused: list[dict[str, str]]
    session_id: str
    memory_dir: str
    attempts: int
    created_at: float
    updated_at: float

    @classmethod
    def of_row(cls, row: Any) -> JobRecord:
        written, refused = json.loads(row["written"]), json.loads(row["refused"])
        return from_row(cls, row, memories_written=written, refused=refused)


@dataclass(eq=False)
class JobQueue:
    """The durable queue of extraction jobs and the per-session turn counter (the throttle)."""

    state: StateDB
    _: KW_ONLY
    queue_max: int = limits.EXTRACT_QUEUE_MAX
    clock: Callable[[], float] = time.time  # epoch seconds: when jobs are due, stamps

    def __post_init__(self) -> None:
        self.state.migrate("extraction_jobs", SCHEMA)

    def enqueue(
        self,
        *,
        session_id: str,
        transcript_path: Path,
        cwd: str,
        memory_dir: Path,
        last_assistant_message: str | None = None,
        kind: str = TURN_END,
        delay: float = limits.EXTRACT_SETTLE_SECONDS,
    ) -> str:
        """Count a turn and queue a job; coalesces with a queued job of the session."""
        now = self.clock()
        with self.state.transaction() as db:
            if kind == TURN_END:
                db.execute(
                    "INSERT INTO extraction_turns(session_id, turns_since, updated_at) VALUES (?, 1, ?) "
                    "ON CONFLICT(session_id) DO UPDATE SET turns_since = turns_since + 1, updated_at = "
                    "excluded.updated_at",
                    (session_id, now),
                )
            queued = db.execute(
                "SELECT job_id FROM jobs WHERE session_id = ? AND status = 'queued' ORDER BY created_at LIMIT 1",
                (session_id,),
            ).fetchone()
            if queued is not None:
                db.execute(
                    "UPDATE jobs SET last_assistant_message = COALESCE(?, last_assistant_message), turns = turns + 1, "
                    "not_before = ?, updated_at = ? WHERE job_id = ?",
                    (last_assistant_message, now + delay, now, queued["job_id"]),
                )
                return str(queued["job_id"])
            count = db.execute("SELECT COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'running')").fetchone()["n"]
            if count >= self.queue_max:
                raise QueueFull(
                    f"the extraction queue is full ({self.queue_max} jobs); memoryd is behind — check `memoryd "
                    "status` and the log."
                )
            job_id = f"job_{uuid.uuid4().hex[:16]}"
            db.execute(
                "INSERT INTO jobs(job_id, kind, session_id, cwd, memory_dir, transcript_path, last_assistant_message, "
                "status, not_before, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)",
                (
                    job_id,
                    kind,
                    session_id,
                    cwd,
                    str(memory_dir),
                    str(transcript_path),
                    last_assistant_message,
                    now + delay,
                    now,
                    now,
                ),
            )
            return job_id

    def turns_since(self, session_id: str) -> int | None:
        row = self.state.query_one("SELECT turns_since FROM extraction_turns WHERE session_id = ?", (session_id,))
        return int(row["turns_since"]) if row else None

    def consume_turns(self, session_id: str, turns: int) -> None:
        """Only the turns a job saw are consumed: a turn-end that arrived while it ran still counts."""
        self.state.execute(
            "UPDATE extraction_turns SET turns_since = MAX(turns_since - ?, 0), updated_at = ? WHERE session_id = ?",
            (turns, self.clock(), session_id),
        )

    def claim(self, *, ignore_delay: bool = False) -> Job | None:
        """The oldest due job, marked running."""
        with self.state.transaction() as db:
            row = db.execute(
                "SELECT * FROM jobs WHERE status = 'queued' AND not_before <= ? ORDER BY created_at LIMIT 1",
                (float("inf") if ignore_delay else self.clock(),),
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? WHERE job_id = ?",
                (self.clock(), row["job_id"]),
            )
            return from_row(Job, row, attempts=int(row["attempts"]) + 1)

    def finish(self, job_id: str, outcome: Outcome) -> None:
        """Record an outcome; a `queued` outcome is retried after EXTRACT_RETRY_SECONDS. Nothing stored holds a
        secret."""
        now = self.clock()
        self.state.execute(
            "UPDATE jobs SET status = ?, reason = ?, written = ?, refused = ?, updated_at = ?, not_before = ? WHERE "
            "job_id = ?",
            (
                outcome.status,
                redact_secrets(outcome.reason),
                json.dumps(outcome.written),
                json.dumps(redact_record(outcome.refused)),
                now,
                now + limits.EXTRACT_RETRY_SECONDS,
                job_id,
            ),
        )

    def requeue_interrupted(self) -> int:
        return self.state.execute(
            "UPDATE jobs SET status = 'queued', reason = 'interrupted; retried after restart' WHERE status = 'running'"
        )

    def get(self, job_id: str) -> JobRecord:
        row = self.state.query_one("SELECT * FROM jobs WHERE job_id = ?", (job_id,))
        if row is None:
            raise JobNotFound(f"no job {job_id!r}; job ids come from POST /v1/events/turn-end.")
        return JobRecord.of_row(row)

    def recent(self, memory_dir: Path | None = None, limit: int = 50) -> list[JobRecord]:
        """The newest jobs (of one memory dir, or all), newest first."""
        where, params = ("WHERE memory_dir = ?", [str(memory_dir)]) if memory_dir else ("", [])
        rows = self.state.query(f"SELECT * FROM jobs {where} ORDER BY updated_at DESC LIMIT ?", (*params, limit))
        return [JobRecord.of_row(r) for r in rows]

    def counts(self, kind: str | None = None) -> dict[str, int]:
        where, params = ("WHERE kind = ?", (kind,)) if kind else ("", ())
        rows = self.state.query(f"SELECT status, COUNT(*) AS n FROM jobs {where} GROUP BY status", params)
        counts = {s: 0 for s in STATUSES}
        counts.update({r["status"]: int(r["n"]) for r in rows})
        return counts

    def prune(self, cutoff: float) -> dict[str, int]:
        """Forget finished jobs and idle sessions' turn counters older than `cutoff`."""
        with self.state.transaction() as db:
            jobs = db.execute(
                "DELETE FROM jobs WHERE status IN ('done', 'skipped', 'failed') AND updated_at < ?", (cutoff,)
            ).rowcount
            turns = db.execute("DELETE FROM extraction_turns WHERE updated_at < ?", (cutoff,)).rowcount
        return {"jobs": jobs, "sessions": turns}
