"""`DreamService`: Auto-Dream for every project, composed of small parts: `Gates` (when a run
may start), `DreamWorker` (runs under the PID lock, phase by phase), `RunRecords` (the runs
table, backups and undo journal). This class answers the API and the scheduler's tick.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memoryd.base.clock import Clock
from memoryd.base.errors import GatesClosed, LockHeld
from memoryd.base.metrics import Metrics
from memoryd.base.process import pid_alive
from memoryd.base.state_db import StateDB
from memoryd.config import DreamSettings
from memoryd.dream.gates import Gate, Gates
from memoryd.dream.runs import DreamRun, RunRecords
from memoryd.dream.worker import DreamWorker, RunProgress
from memoryd.llm import LLMClient
from memoryd.store import MemoryDir, StoreRegistry

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class DreamStatus:
    """A project's consolidation now: each gate with its value, the last run, the running one, the next check."""

    memory_dir: str
    enabled: bool
    gates: list[Gate]
    last_run: DreamRun | None
    running: RunProgress | None
    next_check: str | None


@dataclass(frozen=True, kw_only=True)
class Cancelled:
    """A cancel's answer: the run cancelled, or why there was none."""

    cancelled: bool
    run_id: str | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class Undone:
    """An undo's answer: the files put back as they were before the run."""

    run_id: str
    restored: list[str]


class DreamService:
    def __init__(
        self,
        *,
        settings: DreamSettings,
        gates: Gates,
        stores: StoreRegistry,
        state: StateDB,
        llm: LLMClient,
        metrics: Metrics,
        home: Path,
        clock: Clock,
        stale_notes: Callable[[MemoryDir], list[str]] = lambda store: [],
        on_finished: Callable[[Path, DreamRun], object] = lambda memory_dir, run: None,
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.state = state
        self.gates = gates
        self.records = RunRecords(state=state, backups=home / "dream-runs", clock=clock)
        self.worker = DreamWorker(
            records=self.records,
            llm=llm,
            metrics=metrics,
            clock=clock,
            stale_notes=stale_notes,
            on_finished=on_finished,
        )
        self.next_check: datetime | None = None  # set by the scheduler

    def project_root(self, store: MemoryDir) -> Path | None:
        return self.gates.project_root(store)

    # ------------------------------------------------------------------ API
    def status(self, cwd: str) -> DreamStatus:
        store = self.gates.store_for(cwd)
        last = self.records.of(store.path, limit=1)
        task = self.worker.task(store.path)
        return DreamStatus(
            memory_dir=str(store.path),
            enabled=self.settings.enabled,
            gates=self.gates.check(store, full=True),
            last_run=last[0] if last else None,
            running=task.progress() if task else None,
            next_check=self.next_check.isoformat() if self.next_check else None,
        )

    def run(self, cwd: str, *, force: bool = True) -> str:
        """Start a consolidation now. Forced skips gates 1–3, never the lock; unforced raises
        GatesClosed (409) naming the first closed gate, and records the session scan as the scheduler does."""
        store = self.gates.store_for(cwd)
        if not force:
            closed = next(
                (g for g in self.gates.check(store, record_scan=True) if not g.passes and g.name != "lock"), None
            )
            if closed is not None:
                raise GatesClosed(
                    f"gate {closed.name!r} is closed ({closed.detail}: {closed.value}, needs {closed.threshold}); "
                    "force the run (POST /v1/dream/run or `memoryd dream run`) to skip gates 1-3."
                )
        store.check_writable()  # read-only: a run could change nothing
        return self.worker.start(store, self.gates.lock(store), forced=force)

    def cancel(self, cwd: str) -> Cancelled:
        task = self.worker.cancel(self.gates.store_for(cwd).path)
        if task is None:
            return Cancelled(cancelled=False, message="no consolidation is running for this project")
        return Cancelled(cancelled=True, run_id=task.run_id)

    def runs(self, cwd: str) -> list[DreamRun]:
        return self.runs_of(self.gates.store_for(cwd))

    def runs_of(self, store: MemoryDir) -> list[DreamRun]:
        """The last 50 runs of a memory dir, newest first."""
        return self.records.of(store.path)

    def prior_texts(self, run_id: str) -> dict[str, str | None]:
        """Each file a run touched, with its text from before the run (None: the run created it)."""
        return self.records.manifest(run_id)

    def undo(self, run_id: str) -> Undone:
        """Put every file the run touched back to its prior text (files it created are removed)."""
        row = self.records.get(run_id)
        self.records.check_undoable(row)
        store = self.stores.for_path(Path(row["memory_dir"]))
        store.check_writable()  # before the undo journal: a refused undo must not be finished at the next start
        return Undone(run_id=run_id, restored=self.records.undo(store, run_id))

    def recover(self) -> list[str]:
        """At start: a run a crash left 'running' is rolled back from its backups (its lock mtime
        restored) and marked failed; an undo a crash interrupted is finished. Returns the run ids."""
        recovered: list[str] = []
        for row in self.records.left_running():
            store = self.stores.for_path(Path(row["memory_dir"]))
            self.records.restore(store, row["run_id"])
            lock = self.gates.lock(store)
            holder = lock.holder()
            if holder is None or not pid_alive(holder) or holder == os.getpid():
                lock.rollback(float(row["prior_lock_mtime"]))
            self.records.mark_interrupted(row["run_id"])
            recovered.append(row["run_id"])
        for run_id, memory_dir in self.records.interrupted_undos():
            if memory_dir is not None:
                self.records.undo(self.stores.for_path(memory_dir), run_id)
                recovered.append(run_id)
            self.records.drop_journal(run_id)
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
                if all(g.passes for g in self.gates.check(store, record_scan=True)):
                    started.append(self.worker.start(store, self.gates.lock(store), forced=False))
            except LockHeld:
                continue
            except Exception:
                log.exception("dream check failed for %s", store.path)
        return started

    def wait(self, timeout: float = 30.0) -> None:
        """Block until no run is active (tests and shutdown)."""
        self.worker.wait(timeout)

    def stop(self) -> None:
        self.worker.stop()

    def provider_status(self) -> dict[str, Any]:
        return {
            "enabled": self.settings.enabled,
            "next_check": self.next_check.isoformat() if self.next_check else None,
            "running": [asdict(t.progress()) for t in self.worker.tasks()],
        }
