"""The four Auto-Dream gates, cheapest first (seeds: autoDream.ts): time, scan throttle,
sessions, lock. Each returns its current value so `dream status` can show why it waits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.base.clock import Clock
from memoryd.base.state_db import StateDB
from memoryd.config import DreamSettings
from memoryd.dream.lock import ConsolidationLock
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.transcripts.folders import is_sidechain_path, project_folders


@dataclass
class Gate:
    name: str
    passes: bool
    value: Any
    threshold: Any
    detail: str

    @classmethod
    def elapsed(cls, name: str, elapsed: float | None, minimum: float, *, digits: int, never: str, detail: str) -> Gate:
        """A gate on the time since something last happened; it passes when that never happened."""
        shown = round(elapsed, digits) if elapsed is not None else never
        return cls(name, elapsed is None or elapsed >= minimum, shown, minimum, detail)


def project_transcripts(roots: list[Path], project_root: Path | None) -> list[Path]:
    """Main-session transcripts of a project: `<root>/<sanitized root>[-…]/*.jsonl` (launches in
    subdirectories included; subagent files excluded). Without a known root: none."""
    if project_root is None:
        return []
    return [
        p for folder in project_folders(roots, project_root) for p in folder.glob("*.jsonl") if not is_sidechain_path(p)
    ]


def sessions_touched_since(roots: list[Path], project_root: Path | None, since: float) -> list[str]:
    """Session ids touched after `since`, newest first, with the newest (the current one) removed."""
    touched = []
    for path in project_transcripts(roots, project_root):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime > since:
            touched.append((mtime, path.stem))
    touched.sort(reverse=True)
    return [sid for _, sid in touched[1:]]


GATES_SCHEMA = """
CREATE TABLE IF NOT EXISTS dream_scans (memory_dir TEXT PRIMARY KEY, last_scan_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS dream_projects (memory_dir TEXT PRIMARY KEY, project_root TEXT NOT NULL);
"""


@dataclass(kw_only=True, eq=False)
class Gates:
    """Reads the four gates of a memory dir, and remembers each dir's project root (the session
    gate needs it after a restart, when a dir is only `discover()`ed)."""

    settings: DreamSettings
    stores: StoreRegistry
    state: StateDB
    transcript_roots: list[Path]
    clock: Clock

    def __post_init__(self) -> None:
        self.state.migrate("dream_gates", GATES_SCHEMA)

    def lock(self, store: MemoryDir) -> ConsolidationLock:
        return ConsolidationLock(store.path, stale_seconds=self.settings.lock_stale_seconds)

    def store_for(self, cwd: str) -> MemoryDir:
        """The store of a cwd, its project root recorded for later gate checks."""
        store = self.stores.for_cwd(cwd)
        root = self.stores.project_root_of(store.path)
        if root is not None:
            self.state.execute(
                "INSERT OR REPLACE INTO dream_projects(memory_dir, project_root) VALUES (?, ?)",
                (str(store.path), str(root)),
            )
        return store

    def project_root(self, store: MemoryDir) -> Path | None:
        """The project a memory dir belongs to: from this run's requests, else as last recorded.
        A dir no request ever named has none, and its session gate stays closed (forced runs work)."""
        root = self.stores.project_root_of(store.path)
        if root is not None:
            return root
        row = self.state.query_one("SELECT project_root FROM dream_projects WHERE memory_dir = ?", (str(store.path),))
        return Path(row["project_root"]) if row else None

    def check(self, store: MemoryDir, *, record_scan: bool = False, full: bool = False) -> list[Gate]:
        """The four gates with their current values, cheapest first. The session scan (gate 3)
        runs only when gates 1-2 pass, unless `full` (status: show every value, record nothing)."""
        now = self.clock.time()
        lock = self.lock(store)
        last = lock.last_consolidated_at()
        hours = (now - last) / 3600 if last else None
        time_gate = Gate.elapsed(
            "time",
            hours,
            self.settings.min_hours,
            digits=3,
            never="never consolidated",
            detail="hours since the last consolidation (lock file mtime)",
        )
        row = self.state.query_one("SELECT last_scan_at FROM dream_scans WHERE memory_dir = ?", (str(store.path),))
        since_scan = now - float(row["last_scan_at"]) if row else None
        scan_gate = Gate.elapsed(
            "scan_throttle",
            since_scan,
            self.settings.scan_interval_seconds,
            digits=1,
            never="never scanned",
            detail="seconds since the last session scan",
        )
        out = [time_gate, scan_gate]
        if (time_gate.passes and scan_gate.passes) or full:
            if record_scan and time_gate.passes and scan_gate.passes:
                self.state.execute(
                    "INSERT INTO dream_scans(memory_dir, last_scan_at) VALUES (?, ?) ON CONFLICT(memory_dir) DO "
                    "UPDATE SET last_scan_at = excluded.last_scan_at",
                    (str(store.path), now),
                )
            sessions = sessions_touched_since(self.transcript_roots, self.project_root(store), last)
            out.append(
                Gate(
                    "sessions",
                    len(sessions) >= self.settings.min_sessions,
                    len(sessions),
                    self.settings.min_sessions,
                    "sessions touched since the last consolidation (the current one excluded)",
                )
            )
        holder = lock.held_by_other(now)
        out.append(Gate("lock", holder is None, holder or "free", "free", "PID holding .consolidate-lock"))
        return out
