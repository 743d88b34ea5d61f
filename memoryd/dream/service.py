"""`DreamService`: Auto-Dream for every project. Checks the four gates, runs the four phases
in a worker thread under the PID lock, records every change with the prior file text (so a
run can be undone), and rolls the lock back on failure or cancel.

It does NOT write files itself: actions go through `MemoryDir.save/delete/restore`, so they
stay inside the memory dir and pass the secret check.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from memoryd.config import DreamSettings
from memoryd.dream.gates import Gate, sessions_touched_since
from memoryd.dream.lock import ConsolidationLock, pid_alive
from memoryd.dream.plan import Action, Plan, llm_plan, offline_plan
from memoryd.errors import Conflict, GatesClosed, LLMUnavailable, LockHeld, MemorydError, RunNotFound, TokenBudgetExceeded, Unprocessable
from memoryd.llm import LLMClient
from memoryd.metrics import Metrics
from memoryd.state import StateDB
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.files import atomic_write, make_private_dir
from memoryd.store.frontmatter import split_frontmatter
from memoryd.store.secrets import check_no_secrets, redact_record

log = logging.getLogger(__name__)

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
CREATE TABLE IF NOT EXISTS dream_scans (memory_dir TEXT PRIMARY KEY, last_scan_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS dream_logs (key TEXT PRIMARY KEY, processed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS dream_run_logs (run_id TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (run_id, key));
CREATE TABLE IF NOT EXISTS dream_projects (memory_dir TEXT PRIMARY KEY, project_root TEXT NOT NULL);
"""
# The lock's mtime before a run took it: what a crash recovery rolls it back to.
PRIOR_LOCK_COLUMN = "ALTER TABLE dream_runs ADD COLUMN prior_lock_mtime REAL NOT NULL DEFAULT 0"
UNDO_JOURNAL = "undo-started"  # in a run's backup folder while its undo is applied: a crash finishes it at start
PHASES = ("orient", "gather signal", "consolidate", "prune & index")


class _Cancelled(Exception):
    pass


@dataclass
class RunningTask:
    run_id: str
    memory_dir: Path
    phase: str = "starting"
    files_touched: list[str] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "phase": self.phase, "files_touched": list(self.files_touched)}


class DreamService:
    def __init__(
        self,
        *,
        settings: DreamSettings,
        stores: StoreRegistry,
        state: StateDB,
        llm: LLMClient,
        metrics: Metrics,
        home: Path,
        transcript_roots: list[Path],
        now: Callable[[], datetime],
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.state = state
        self.llm = llm
        self.metrics = metrics
        self.backups = home / "dream-runs"
        self.transcript_roots = transcript_roots
        self.now = now
        state.migrate("dream", SCHEMA)
        if "prior_lock_mtime" not in {r["name"] for r in state.query("PRAGMA table_info(dream_runs)")}:
            state.execute(PRIOR_LOCK_COLUMN)
        self._running: dict[Path, RunningTask] = {}
        self._lock = threading.Lock()
        self.next_check: datetime | None = None
        # Test seams: called as each phase starts and between actions (a test can pause, cancel or fail a run there).
        self.phase_started: Callable[[RunningTask], None] = lambda task: None
        self.between_actions: Callable[[RunningTask], None] = lambda task: None
        # What the run proposes for memories naming things the project no longer has (set by the daemon).
        self.stale_notes: Callable[[MemoryDir], list[str]] = lambda store: []

    # ------------------------------------------------------------------ gates
    def _ts(self) -> float:
        return self.now().timestamp()

    def _store(self, cwd: str) -> MemoryDir:
        """The store of a cwd; its project root is remembered in SQLite so the session gate
        still works for that dir after a restart (when it is only `discover()`ed)."""
        store = self.stores.for_cwd(cwd)
        root = self.stores.project_root_of(store.path)
        if root is not None:
            self.state.execute("INSERT OR REPLACE INTO dream_projects(memory_dir, project_root) VALUES (?, ?)", (str(store.path), str(root)))
        return store

    def project_root(self, store: MemoryDir) -> Path | None:
        """The project a memory dir belongs to: from this run's requests, else as last recorded.
        A dir no request ever named has none, and its session gate stays closed (forced runs work)."""
        root = self.stores.project_root_of(store.path)
        if root is not None:
            return root
        row = self.state.query_one("SELECT project_root FROM dream_projects WHERE memory_dir = ?", (str(store.path),))
        return Path(row["project_root"]) if row else None

    def gates(self, store: MemoryDir, *, record_scan: bool = False, full: bool = False) -> list[Gate]:
        """The four gates with their current values, cheapest first. The session scan (gate 3)
        runs only when gates 1-2 pass, unless `full` (status: show every value, record nothing)."""
        now = self._ts()
        lock = ConsolidationLock(store.path, stale_seconds=self.settings.lock_stale_seconds)
        last = lock.last_consolidated_at()
        hours = (now - last) / 3600 if last else None
        time_gate = Gate("time", hours is None or hours >= self.settings.min_hours, round(hours, 3) if hours is not None else "never consolidated",
                         self.settings.min_hours, "hours since the last consolidation (lock file mtime)")
        out = [time_gate]
        row = self.state.query_one("SELECT last_scan_at FROM dream_scans WHERE memory_dir = ?", (str(store.path),))
        since_scan = now - float(row["last_scan_at"]) if row else None
        scan_gate = Gate("scan_throttle", since_scan is None or since_scan >= self.settings.scan_interval_seconds,
                         round(since_scan, 1) if since_scan is not None else "never scanned", self.settings.scan_interval_seconds, "seconds since the last session scan")
        out.append(scan_gate)
        if (time_gate.passes and scan_gate.passes) or full:
            if record_scan and time_gate.passes and scan_gate.passes:
                self.state.execute("INSERT INTO dream_scans(memory_dir, last_scan_at) VALUES (?, ?) ON CONFLICT(memory_dir) DO UPDATE SET last_scan_at = excluded.last_scan_at", (str(store.path), now))
            sessions = sessions_touched_since(self.transcript_roots, self.project_root(store), last)
            out.append(Gate("sessions", len(sessions) >= self.settings.min_sessions, len(sessions), self.settings.min_sessions,
                            "sessions touched since the last consolidation (the current one excluded)"))
        holder = lock.held_by_other(now)
        out.append(Gate("lock", holder is None, holder or "free", "free", "PID holding .consolidate-lock"))
        return out

    # ------------------------------------------------------------------ API
    def status(self, cwd: str) -> dict[str, Any]:
        store = self._store(cwd)
        last = self.state.query_one("SELECT * FROM dream_runs WHERE memory_dir = ? ORDER BY started_at DESC LIMIT 1", (str(store.path),))
        with self._lock:
            task = self._running.get(store.path)
        return {
            "memory_dir": str(store.path),
            "enabled": self.settings.enabled,
            "gates": [g.as_dict() for g in self.gates(store, full=True)],
            "last_run": self._run_dict(last) if last else None,
            "running": task.as_dict() if task else None,
            "next_check": self.next_check.isoformat() if self.next_check else None,
        }

    def run(self, cwd: str, *, force: bool = True) -> str:
        """Start a consolidation now. Forced skips gates 1–3, never the lock; unforced raises
        GatesClosed (409) naming the first closed gate, and records the session scan as the scheduler does."""
        store = self._store(cwd)
        if not force:
            closed = next((g for g in self.gates(store, record_scan=True) if not g.passes and g.name != "lock"), None)
            if closed is not None:
                raise GatesClosed(f"gate {closed.name!r} is closed ({closed.detail}: {closed.value}, needs {closed.threshold}); force the run (POST /v1/dream/run or `memoryd dream run`) to skip gates 1-3.")
        store.check_writable()  # read-only: a run could change nothing
        return self._start(store, forced=force)

    def cancel(self, cwd: str) -> dict[str, Any]:
        store = self._store(cwd)
        with self._lock:
            task = self._running.get(store.path)
        if task is None:
            return {"cancelled": False, "message": "no consolidation is running for this project"}
        task.cancel.set()
        if task.thread is not None:
            task.thread.join(timeout=30)
        return {"cancelled": True, "run_id": task.run_id}

    def runs(self, cwd: str) -> list[dict[str, Any]]:
        return self.runs_of(self._store(cwd))

    def runs_of(self, store: MemoryDir) -> list[dict[str, Any]]:
        """The last 50 runs of a memory dir, newest first."""
        rows = self.state.query("SELECT * FROM dream_runs WHERE memory_dir = ? ORDER BY started_at DESC LIMIT 50", (str(store.path),))
        return [self._run_dict(r) for r in rows]

    def prior_texts(self, run_id: str) -> dict[str, str | None]:
        """Each file a run touched, with its text from before the run (None: the run created it)."""
        return self._manifest(run_id)

    def undo(self, run_id: str) -> dict[str, Any]:
        """Put every file the run touched back to its prior text (files it created are removed)."""
        row = self.state.query_one("SELECT * FROM dream_runs WHERE run_id = ?", (run_id,))
        if row is None:
            raise RunNotFound(f"no consolidation run {run_id!r}; list them with GET /v1/dream/runs?cwd=… or `memoryd dream runs`.")
        if row["undone_at"]:
            raise Conflict(f"run {run_id} was already undone.")
        if row["status"] not in ("done", "failed", "cancelled"):
            raise Conflict(f"run {run_id} is {row['status']}; cancel it first (memoryd dream cancel).")
        store = self.stores.for_path(Path(row["memory_dir"]))
        store.check_writable()  # before the undo journal: a refused undo must not be finished at the next start
        return {"run_id": run_id, "restored": self._undo(store, run_id)}

    def _undo(self, store: MemoryDir, run_id: str) -> list[str]:
        """All or nothing: every prior text is checked first (a refusal changes nothing); a journal
        marks the undo as begun, so a crash part-way is finished at the next start."""
        folder = self.backups / run_id
        self._check_restorable(store, run_id)
        if folder.is_dir():
            atomic_write(folder / UNDO_JOURNAL, str(time.time()))
        restored = self._restore(store, run_id)
        with self.state.transaction() as db:
            # The logs this run distilled count as new again, so the next run distils them anew.
            db.execute("DELETE FROM dream_logs WHERE key IN (SELECT key FROM dream_run_logs WHERE run_id = ?)", (run_id,))
            db.execute("DELETE FROM dream_run_logs WHERE run_id = ?", (run_id,))
            db.execute("UPDATE dream_runs SET undone_at = ? WHERE run_id = ?", (time.time(), run_id))
        (folder / UNDO_JOURNAL).unlink(missing_ok=True)
        return restored

    def _check_restorable(self, store: MemoryDir, run_id: str) -> None:
        """Refuse an undo before it changes anything when one of its prior texts would be refused."""
        for filename, text in self._manifest(run_id).items():
            if text is None:
                continue
            try:
                meta, body = split_frontmatter(text, source=filename)
                check_no_secrets({"name": str(meta.get("name") or ""), "description": str(meta.get("description") or ""), "body": body})
            except Unprocessable as exc:
                raise Conflict(f"run {run_id} cannot be undone: the prior text of {filename} is refused ({exc.message}); nothing was changed.") from None

    def recover(self) -> list[str]:
        """At start: a run a crash left 'running' is rolled back from its backups (its lock mtime
        restored) and marked failed; an undo a crash interrupted is finished. Returns the run ids."""
        recovered: list[str] = []
        for row in self.state.query("SELECT * FROM dream_runs WHERE status = 'running'"):
            store = self.stores.for_path(Path(row["memory_dir"]))
            self._restore(store, row["run_id"])
            lock = ConsolidationLock(store.path, stale_seconds=self.settings.lock_stale_seconds)
            if lock.holder() is None or not pid_alive(lock.holder() or 0) or lock.holder() == os.getpid():
                lock.rollback(float(row["prior_lock_mtime"]))
            self.state.execute(
                "UPDATE dream_runs SET status = 'failed', finished_at = ?, error = ? WHERE run_id = ?",
                (time.time(), "interrupted (the daemon stopped mid-run); every change was rolled back from the backups", row["run_id"]),
            )
            recovered.append(row["run_id"])
        for journal in self.backups.glob(f"*/{UNDO_JOURNAL}") if self.backups.is_dir() else []:
            run_id = journal.parent.name
            undone = self.state.query_one("SELECT memory_dir, undone_at FROM dream_runs WHERE run_id = ?", (run_id,))
            if undone is not None and not undone["undone_at"]:
                self._undo(self.stores.for_path(Path(undone["memory_dir"])), run_id)
                recovered.append(run_id)
            journal.unlink(missing_ok=True)
        if recovered:
            log.info("recovered %d consolidation run(s) a stop interrupted: %s", len(recovered), ", ".join(recovered))
        return recovered

    def check_all(self) -> list[str]:
        """The scheduler's tick: start a run for every project whose four gates pass."""
        started: list[str] = []
        if not self.settings.enabled:
            return started
        for store in {s.path: s for s in [*self.stores.known(), *self.stores.discover()]}.values():
            try:
                if all(g.passes for g in self.gates(store, record_scan=True)):
                    started.append(self._start(store, forced=False))
            except LockHeld:
                continue
            except Exception:
                log.exception("dream check failed for %s", store.path)
        return started

    def wait(self, timeout: float = 30.0) -> None:
        """Block until no run is active (tests and shutdown)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                threads = [t.thread for t in self._running.values() if t.thread]
            if not threads:
                return
            for t in threads:
                t.join(timeout=max(0.0, deadline - time.monotonic()))

    def stop(self) -> None:
        with self._lock:
            tasks = list(self._running.values())
        for task in tasks:
            task.cancel.set()
        self.wait(timeout=15)

    # ------------------------------------------------------------------ running
    def _start(self, store: MemoryDir, *, forced: bool) -> str:
        with self._lock:
            if store.path in self._running:
                raise LockHeld(f"a consolidation is already running for {store.path}; wait for it or cancel it (memoryd dream cancel).")
            lock = ConsolidationLock(store.path, stale_seconds=self.settings.lock_stale_seconds)
            prior = lock.try_acquire(self._ts())
            if prior is None:
                raise LockHeld(f"{lock.path} is held by PID {lock.holder()}; another memoryd is consolidating. It frees itself within {int(self.settings.lock_stale_seconds // 60)} min if that process died.")
            run_id = f"dream_{uuid.uuid4().hex[:12]}"
            task = RunningTask(run_id, store.path)
            self._running[store.path] = task
        self.state.execute(
            "INSERT INTO dream_runs(run_id, memory_dir, started_at, status, forced, prior_lock_mtime) VALUES (?, ?, ?, 'running', ?, ?)",
            (run_id, str(store.path), time.time(), int(forced), prior),
        )
        task.thread = threading.Thread(target=self._execute, args=(store, task, lock, prior), name=f"memoryd-dream-{run_id}", daemon=True)
        task.thread.start()
        return run_id

    def _execute(self, store: MemoryDir, task: RunningTask, lock: ConsolidationLock, prior: float) -> None:
        changes: list[dict[str, Any]] = []
        plan = Plan()
        status, error = "done", ""
        try:
            plan = self._phases(store, task, changes)
            lock.release_success(self._ts())
        except _Cancelled:
            status, error = "cancelled", "cancelled by request; the changes made so far were restored"
            self._restore(store, task.run_id)
            lock.rollback(prior)
        except Exception as exc:
            status, error = "failed", f"{exc.__class__.__name__}: {getattr(exc, 'message', exc)}"
            log.warning("consolidation %s failed: %s; restoring files and rolling the lock back", task.run_id, error)
            self._restore(store, task.run_id)
            lock.rollback(prior)
        finally:
            with self._lock:
                self._running.pop(store.path, None)
        self.state.execute(
            "UPDATE dream_runs SET finished_at = ?, status = ?, method = ?, changes = ?, notes = ?, error = ? WHERE run_id = ?",
            (time.time(), status, plan.method, json.dumps(redact_record(changes)), json.dumps(redact_record(plan.notes)),
             redact_record(error), task.run_id),
        )
        self.metrics.dream_runs.labels(status).inc()

    def _check_cancel(self, task: RunningTask) -> None:
        if task.cancel.is_set():
            raise _Cancelled()

    def _enter(self, task: RunningTask, phase: str) -> None:
        task.phase = phase
        self.phase_started(task)
        self._check_cancel(task)

    def _phases(self, store: MemoryDir, task: RunningTask, changes: list[dict[str, Any]]) -> Plan:
        processed = {r["key"] for r in self.state.query("SELECT key FROM dream_logs")}
        self._enter(task, PHASES[0])  # orient: the planners read the manifest and files
        self._enter(task, PHASES[1])  # gather signal: files, daily logs
        plan: Plan
        if self.llm.enabled:
            try:
                plan = llm_plan(store, self.llm, processed_logs=processed, today=self.now().date())
            except (LLMUnavailable, TokenBudgetExceeded) as exc:
                plan = offline_plan(store, processed_logs=processed)
                plan.notes.insert(0, f"LLM unavailable ({exc.message}); deterministic consolidation used")
        else:
            plan = offline_plan(store, processed_logs=processed)
        self._enter(task, PHASES[2])  # consolidate
        for action in sorted(plan.actions, key=lambda a: a.op == "delete"):  # deletes last: their `[[link]]` redirects see the final files
            self._check_cancel(task)
            self.between_actions(task)
            self._apply(store, task, action, changes, plan)
        self._enter(task, PHASES[3])  # prune & index
        plan.notes.extend(self.stale_notes(store))
        store.rebuild_index()
        served = store.served_index()
        if served.truncated:
            plan.notes.append(f"MEMORY.md is still over the limits ({served.lines} lines served); merge or delete more memories")
        for log_path in plan.logs:
            key = f"{log_path}:{log_path.stat().st_mtime_ns}"
            self.state.execute("INSERT OR IGNORE INTO dream_logs(key, processed_at) VALUES (?, ?)", (key, time.time()))
            self.state.execute("INSERT OR IGNORE INTO dream_run_logs(run_id, key) VALUES (?, ?)", (task.run_id, key))
        return plan

    def _backup(self, run_id: str, filename: str, prior: str | None) -> None:
        folder = self.backups / run_id
        make_private_dir(folder)
        manifest = folder / "manifest.json"
        data = json.loads(manifest.read_text()) if manifest.exists() else {}
        if filename in data:
            return  # keep the text from before the run's first change
        data[filename] = prior
        atomic_write(manifest, json.dumps(data))  # a kill -9 mid-write must not lose the prior texts

    def _manifest(self, run_id: str) -> dict[str, str | None]:
        manifest = self.backups / run_id / "manifest.json"
        return json.loads(manifest.read_text()) if manifest.exists() else {}

    def _restore(self, store: MemoryDir, run_id: str) -> list[str]:
        """Put back every file the run touched (idempotent: a second pass after a crash changes nothing more)."""
        data = self._manifest(run_id)
        for filename, text in data.items():
            store.restore(filename, text, source="undo")
        return sorted(data)

    def _apply(self, store: MemoryDir, task: RunningTask, action: Action, changes: list[dict[str, Any]], plan: Plan) -> None:
        try:
            backup = functools.partial(self._backup, task.run_id)  # the store records each prior text under its lock
            if action.op == "delete" and action.filename:
                store.delete(action.filename, source="dream", backup=backup, replaced_by=action.merged_into)
                target = action.filename
            else:
                result = store.save(name=action.name, description=action.description, type=action.type, body=action.body,
                                    filename=action.filename, source="dream", backup=backup)
                target = result.memory.filename
        except Unprocessable as exc:  # e.g. a secret in an LLM-proposed body: refused, the run goes on
            plan.notes.append(f"refused {action.op} {action.filename or action.name}: {exc.code}")
            return
        except MemorydError as exc:
            plan.notes.append(f"skipped {action.op} {action.filename or action.name}: {exc.message}")
            return
        task.files_touched.append(target)
        changes.append({"op": action.op, "filename": target, "why": action.why})

    @staticmethod
    def _run_dict(row: Any) -> dict[str, Any]:
        def iso(ts: float | None) -> str | None:
            return datetime.fromtimestamp(ts, timezone.utc).isoformat() if ts else None

        return {
            "run_id": row["run_id"],
            "status": row["status"],
            "forced": bool(row["forced"]),
            "method": row["method"],
            "started_at": iso(row["started_at"]),
            "finished_at": iso(row["finished_at"]),
            "changes": json.loads(row["changes"]),
            "notes": json.loads(row["notes"]),
            "error": row["error"],
            "undone_at": iso(row["undone_at"]),
        }

    def provider_status(self) -> dict[str, Any]:
        with self._lock:
            running = [t.as_dict() for t in self._running.values()]
        return {"enabled": self.settings.enabled, "next_check": self.next_check.isoformat() if self.next_check else None, "running": running}
