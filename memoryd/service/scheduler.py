"""APScheduler wiring: what runs when. The gate logic lives in `memoryd.dream`."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Callable

from apscheduler.schedulers.background import BackgroundScheduler

from memoryd.dream import DreamService

log = logging.getLogger(__name__)


class Scheduler:
    """One background scheduler; today a single job: the Auto-Dream gate check."""

    def __init__(self, dream: DreamService, *, check_interval_seconds: float, enabled: bool) -> None:
        self.dream = dream
        self.interval = check_interval_seconds
        self.enabled = enabled
        self._scheduler: BackgroundScheduler | None = None
        self._jobs: list[tuple[str, Callable[[], None], float]] = []

    def add_job(self, job_id: str, fn: Callable[[], None], *, seconds: float) -> None:
        """Another part's periodic job (e.g. team sync); registered before `start`."""
        self._jobs.append((job_id, fn, seconds))

    def start(self) -> None:
        if not self.enabled and not self._jobs:
            return
        self._scheduler = BackgroundScheduler(
            timezone=timezone.utc, job_defaults={"coalesce": True, "max_instances": 1}
        )
        now = datetime.now(timezone.utc)  # APScheduler's own timebase (real time), not the daemon's clock
        if self.enabled:
            first = now + timedelta(seconds=min(60.0, self.interval))
            self._scheduler.add_job(
                self._tick, "interval", seconds=self.interval, id="dream-check", next_run_time=first
            )
        for job_id, fn, seconds in self._jobs:
            self._scheduler.add_job(
                fn, "interval", seconds=seconds, id=job_id, next_run_time=now + timedelta(seconds=seconds)
            )
        self._scheduler.start()
        self._update_next()

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
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None
