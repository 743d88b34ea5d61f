"""`.consolidate-lock`: the holder's PID inside, the file's mtime = last consolidated at.

Mirrors the seeds' consolidationLock.ts: a holder is stale after an hour or when its PID is
dead; acquire writes our PID then re-reads it (two reclaimers: the later writer wins);
failure or cancel rolls the mtime back (removing the file when there was none), so the next
check retries. A successful run empties the PID, keeping the mtime as "last consolidated".
"""

from __future__ import annotations

import os
from pathlib import Path

from memoryd.base import limits
from memoryd.base.files import dir_lock
from memoryd.base.process import pid_alive


class ConsolidationLock:
    def __init__(self, memory_dir: Path, *, stale_seconds: float = limits.DREAM_LOCK_STALE_SECONDS) -> None:
        self.path = memory_dir / limits.DREAM_LOCK_FILENAME
        self.stale_seconds = stale_seconds

    def last_consolidated_at(self) -> float:
        """The lock's mtime; 0.0 when never consolidated."""
        try:
            return self.path.stat().st_mtime
        except FileNotFoundError:
            return 0.0

    def holder(self) -> int | None:
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        return int(text) if text.isdigit() else None

    def held_by_other(self, now: float) -> int | None:
        """The live, fresh holder's PID, or None when the lock can be taken (`now`: epoch seconds)."""
        pid = self.holder()
        if pid is None:
            return None
        mtime = self.last_consolidated_at()
        if now - mtime >= self.stale_seconds or not pid_alive(pid):
            return None
        return pid

    def try_acquire(self, now: float) -> float | None:
        """Take the lock; returns the prior mtime (0.0: none) for rollback, or None when held."""
        # The seeds' write-then-verify lets two reclaimers both win in one interleaving (A writes,
        # A verifies, then B writes); the directory's file lock makes check-write-verify atomic.
        with dir_lock(self.path.parent):
            if self.held_by_other(now) is not None:
                return None
            prior = self.last_consolidated_at()
            self.path.write_text(str(os.getpid()), encoding="utf-8")
            if self.holder() != os.getpid():  # write-then-verify, kept for writers without the file lock
                return None
            return prior

    def rollback(self, prior_mtime: float) -> None:
        """Undo an acquire after failure or cancel: restore the prior mtime, or remove the file."""
        if prior_mtime <= 0:
            self.path.unlink(missing_ok=True)
            return
        try:
            self.path.write_text("", encoding="utf-8")
            os.utime(self.path, (prior_mtime, prior_mtime))
        except FileNotFoundError:
            pass

    def release_success(self, now: float) -> None:
        """Mark a finished consolidation: no holder, mtime = now."""
        self.path.write_text("", encoding="utf-8")
        os.utime(self.path, (now, now))
