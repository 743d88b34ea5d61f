"""`Backfill`: mine transcripts that existed before memoryd was watching. It brings matching
transcripts up to date through the one pipeline (resumable: the cursors are durable), then
queues one extraction job per session with pending turns; the job queue runs them one at a
time, paced, metered like any other model work."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.extract.jobs import BACKFILL
from memoryd.extract.pending import PendingTurns
from memoryd.extract.service import ExtractionService
from memoryd.store import StoreRegistry
from memoryd.store.paths import project_root
from memoryd.transcripts.folders import is_sidechain_path, project_folders
from memoryd.transcripts.service import TranscriptService

DEFAULT_SINCE_DAYS = 30.0  # Claude Code keeps transcripts 30 days by default


@dataclass(kw_only=True, eq=False)
class Backfill:
    transcripts: TranscriptService
    pending: PendingTurns
    extraction: ExtractionService
    stores: StoreRegistry
    clock: Callable[[], float] = time.time

    def start(self, *, since_days: float = DEFAULT_SINCE_DAYS, cwd: str | None = None) -> dict[str, Any]:
        """Queue extraction of every main-session transcript touched in the last `since_days`
        (of one project when `cwd` is given). Sessions already queued are not queued twice."""
        cutoff = self.clock() - since_days * 86400
        project = project_root(cwd) if cwd else None
        files = [
            path
            for folder in project_folders(self.transcripts.roots, project)
            for path in sorted(folder.rglob("*.jsonl"))
            if not is_sidechain_path(path) and not path.is_symlink() and path.stat().st_mtime >= cutoff
        ]
        queued, sessions, skipped = [], 0, 0
        pending = set(self.pending.sessions())
        for path in files:
            self.transcripts.pipeline.advance(path)
            row = self.transcripts.pipeline.row(path)
            if row is None or not row["cwd"]:
                skipped += 1
                continue
            sessions += 1
            if row["session_id"] not in pending and row["session_id"] not in set(self.pending.sessions()):
                continue  # nothing said since the last extraction of this session
            try:
                memory_dir = self.stores.memory_dir_for(row["cwd"])
            except Exception:  # the session's cwd is gone or unusable: nothing to file it under
                skipped += 1
                continue
            queued.append(
                self.extraction.enqueue_backfill(row["session_id"], Path(row["path"]), row["cwd"], memory_dir)
            )
        return {
            "transcripts": len(files),
            "sessions": sessions,
            "jobs_queued": len(set(queued)),
            "skipped": skipped,
            "since_days": since_days,
            "project": str(project) if project else None,
        }

    def progress(self) -> dict[str, Any]:
        counts = self.extraction.jobs.counts(BACKFILL)
        total = sum(counts.values())
        finished = counts["done"] + counts["skipped"] + counts["failed"]
        return {**counts, "total": total, "finished": finished, "active": counts["queued"] + counts["running"] > 0}
