"""`DreamWorker`: runs consolidations, one thread per memory dir under its PID lock, through the
four phases. A failure or cancel restores every touched file and rolls the lock back.

It does NOT write files itself: actions go through `MemoryDir.save/delete/restore`, so they
stay inside the memory dir and pass the secret check.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.base.clock import Clock
from memoryd.base.errors import LockHeld, MemorydError, Unprocessable
from memoryd.base.metrics import Metrics
from memoryd.dream.lock import ConsolidationLock
from memoryd.dream.plan import Action, Plan, make_plan
from memoryd.dream.runs import DreamRun, RunRecords
from memoryd.llm import LLMClient
from memoryd.store import MemoryDir
from memoryd.store.model import draft_fields

log = logging.getLogger(__name__)

PHASES = ("orient", "gather signal", "consolidate", "prune & index")
CANCEL_JOIN_SECONDS = 30.0  # how long a cancel request waits for the run to roll back


class _Cancelled(Exception):
    pass


@dataclass(frozen=True)
class RunProgress:
    """Where a running consolidation is, as the status shows it: a copy, so the run goes on undisturbed."""

    run_id: str
    phase: str
    files_touched: list[str]


@dataclass
class RunningTask:
    run_id: str
    memory_dir: Path
    phase: str = "starting"
    files_touched: list[str] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def progress(self) -> RunProgress:
        return RunProgress(self.run_id, self.phase, list(self.files_touched))


@dataclass(kw_only=True, eq=False)
class DreamWorker:
    records: RunRecords
    llm: LLMClient
    metrics: Metrics
    clock: Clock
    # What the run proposes for memories naming things the project no longer has (the stale checker).
    stale_notes: Callable[[MemoryDir], list[str]] = lambda store: []
    # Told of each finished run, as its record reads (the web view's live page).
    on_finished: Callable[[Path, DreamRun], object] = lambda memory_dir, run: None

    def __post_init__(self) -> None:
        self._running: dict[Path, RunningTask] = {}
        self._lock = threading.Lock()
        # Test seams: called as each phase starts and between actions (a test can pause, cancel or fail a run there).
        self.phase_started: Callable[[RunningTask], None] = lambda task: None
        self.between_actions: Callable[[RunningTask], None] = lambda task: None

    # ------------------------------------------------------------------ run control
    def task(self, memory_dir: Path) -> RunningTask | None:
        with self._lock:
            return self._running.get(memory_dir)

    def tasks(self) -> list[RunningTask]:
        with self._lock:
            return list(self._running.values())

    def start(self, store: MemoryDir, lock: ConsolidationLock, *, forced: bool) -> str:
        """Take the dir's lock and start a run in its own thread; LockHeld (409) when either is busy."""
        with self._lock:
            if store.path in self._running:
                raise LockHeld(
                    f"a consolidation is already running for {store.path}; wait for it or cancel it (memoryd dream "
                    "cancel)."
                )
            prior = lock.try_acquire(self.clock.time())
            if prior is None:
                raise LockHeld(
                    f"{lock.path} is held by PID {lock.holder()}; another memoryd is consolidating. It frees itself "
                    f"within {int(lock.stale_seconds // 60)} min if that process died."
                )
            task = RunningTask(f"dream_{uuid.uuid4().hex[:12]}", store.path)
            self._running[store.path] = task
        self.records.started(task.run_id, store.path, forced=forced, prior_lock_mtime=prior)
        task.thread = threading.Thread(
            target=self._execute, args=(store, task, lock, prior), name=f"memoryd-dream-{task.run_id}", daemon=True
        )
        task.thread.start()
        return task.run_id

    def cancel(self, memory_dir: Path) -> RunningTask | None:
        """Ask the dir's run to stop and wait for its rollback; None when nothing runs."""
        task = self.task(memory_dir)
        if task is None:
            return None
        task.cancel.set()
        if task.thread is not None:
            task.thread.join(timeout=CANCEL_JOIN_SECONDS)
        return task

    def wait(self, timeout: float = 30.0) -> None:
        """Block until no run is active (tests and shutdown); real time, whatever the clock says."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            threads = [t.thread for t in self.tasks() if t.thread]
            if not threads:
                return
            for t in threads:
                t.join(timeout=max(0.0, deadline - time.monotonic()))

    def stop(self) -> None:
        for task in self.tasks():
            task.cancel.set()
        self.wait(timeout=15)

    # ------------------------------------------------------------------ one run
    def _execute(self, store: MemoryDir, task: RunningTask, lock: ConsolidationLock, prior: float) -> None:
        changes: list[dict[str, Any]] = []
        plan = Plan()
        status, error = "done", ""
        try:
            plan = self._phases(store, task, changes)
            lock.release_success(self.clock.time())
        except _Cancelled:
            status, error = "cancelled", "cancelled by request; the changes made so far were restored"
            self.records.restore(store, task.run_id)
            lock.rollback(prior)
        except Exception as exc:
            status, error = "failed", f"{exc.__class__.__name__}: {getattr(exc, 'message', exc)}"
            log.warning("consolidation %s failed: %s; restoring files and rolling the lock back", task.run_id, error)
            self.records.restore(store, task.run_id)
            lock.rollback(prior)
        finally:
            with self._lock:
                self._running.pop(store.path, None)
        self.records.finished(task.run_id, status=status, plan=plan, changes=changes, error=error)
        self.on_finished(store.path, DreamRun.of_row(self.records.get(task.run_id)))
        self.metrics.dream_runs.labels(status).inc()

    def _enter(self, task: RunningTask, phase: str) -> None:
        task.phase = phase
        self.phase_started(task)
        if task.cancel.is_set():
            raise _Cancelled()

    def _phases(self, store: MemoryDir, task: RunningTask, changes: list[dict[str, Any]]) -> Plan:
        processed = self.records.processed_logs()
        self._enter(task, PHASES[0])  # orient: the planners read the manifest and files
        self._enter(task, PHASES[1])  # gather signal: files, daily logs
        plan = make_plan(store, self.llm, processed_logs=processed, today=self.clock.now().date())
        self._enter(task, PHASES[2])  # consolidate
        for action in sorted(
            plan.actions, key=lambda a: a.op == "delete"
        ):  # deletes last: their `[[link]]` redirects see the final files
            if task.cancel.is_set():
                raise _Cancelled()
            self.between_actions(task)
            self.apply(store, task, action, changes, plan)
        self._enter(task, PHASES[3])  # prune & index
        plan.notes.extend(self.stale_notes(store))
        store.rebuild_index()
        served = store.served_index()
        if served.truncated:
            plan.notes.append(
                f"MEMORY.md is still over the limits ({served.lines} lines served); merge or delete more memories"
            )
        for log_path in plan.logs:
            self.records.distilled(task.run_id, log_path)
        return plan

    def apply(
        self, store: MemoryDir, task: RunningTask, action: Action, changes: list[dict[str, Any]], plan: Plan
    ) -> None:
        """One action through the store's write path; the store records each prior text under its lock."""
        try:
            backup = functools.partial(self.records.backup, task.run_id)
            if action.op == "delete" and action.filename:
                store.delete(action.filename, source="dream", backup=backup, replaced_by=action.merged_into)
                target = action.filename
            else:
                result = store.save(
                    **draft_fields(action),
                    filename=action.filename,
                    source="dream",
                    backup=backup,
                    applies_to=action.applies_to,
                )
                target = result.memory.filename
        except Unprocessable as exc:  # e.g. a secret in an LLM-proposed body: refused, the run goes on
            plan.notes.append(f"refused {action.op} {action.filename or action.name}: {exc.code}")
            return
        except MemorydError as exc:
            plan.notes.append(f"skipped {action.op} {action.filename or action.name}: {exc.message}")
            return
        task.files_touched.append(target)
        changes.append({"op": action.op, "filename": target, "why": action.why})
