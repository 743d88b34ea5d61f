"""APScheduler wiring: what runs when. The gate logic lives in `memoryd.dream`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.background import BackgroundScheduler

from memoryd.dream import DreamService

log = logging.getLogger(__name__)


class Scheduler:
    """One background scheduler: the Auto-Dream gate check, and jobs other parts add (team sync,
    once a team folder exists); it runs only while it has a job."""

    def __init__(self, dream: DreamService, *, check_interval_seconds: float, enabled: bool) -> None:
        self.dream = dream
        self.interval = check_interval_seconds
        self.enabled = enabled
        self._scheduler: BackgroundScheduler | None = None
        self._jobs: list[tuple[str, Callable[[], None], float]] = []
        self._started = False
        self._lock = threading.Lock()

    def add_job(self, job_id: str, fn: Callable[[], None], *, seconds: float) -> None:
        """Another part's periodic job (e.g. team sync), before or after `start`; the same id twice is one job."""
        with self._lock:
            if any(known == job_id for known, _, _ in self._jobs):
                return
            self._jobs.append((job_id, fn, seconds))
            if self._started:
                self._schedule(job_id, fn, seconds)

    def job_ids(self) -> list[str]:
        """The jobs scheduled now (none before `start`)."""
        return [job.id for job in self._scheduler.get_jobs()] if self._scheduler is not None else []

    def start(self) -> None:
        with self._lock:
            self._started = True
            if self.enabled:
                first = datetime.now(UTC) + timedelta(seconds=min(60.0, self.interval))
                self._running().add_job(
                    self._tick, "interval", seconds=self.interval, id="dream-check", next_run_time=first
                )
            for job_id, fn, seconds in self._jobs:
                self._schedule(job_id, fn, seconds)
        self._update_next()

    def _running(self) -> BackgroundScheduler:
        """The APScheduler, started on the first job (an idle daemon runs no scheduler thread)."""
        if self._scheduler is None:
            self._scheduler = BackgroundScheduler(timezone=UTC, job_defaults={"coalesce": True, "max_instances": 1})
            self._scheduler.start()
        return self._scheduler

    def _schedule(self, job_id: str, fn: Callable[[], None], seconds: float) -> None:
        now = datetime.now(UTC)  # APScheduler's own timebase (real time), not the daemon's clock
        self._running().add_job(
            fn, "interval", seconds=seconds, id=job_id, next_run_time=now + timedelta(seconds=seconds)
        )

    def _tick(self) -> None:
        try:
            started = self.dream.check_all()
            if started:
                log.info("auto-dream started %d consolidation(s)", len(started))
        finally:
            self._update_next()

    def _update_next(self) -> None:
        job = self._scheduler.get_job("dream-check") if self._scheduler else None
        self.dream.next_check = job.next_run_time if job else None

    def stop(self) -> None:
        with self._lock:
            self._started = False
            if self._scheduler is not None:
                self._scheduler.shutdown(wait=False)
                self._scheduler = None
