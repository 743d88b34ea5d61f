"""APScheduler wiring: what runs when. The gate logic lives in `memoryd.dream`."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

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

    def start(self) -> None:
        if not self.enabled:
            return
        self._scheduler = BackgroundScheduler(timezone=timezone.utc, job_defaults={"coalesce": True, "max_instances": 1})
        first = datetime.now(timezone.utc) + timedelta(seconds=min(60.0, self.interval))
        self._scheduler.add_job(self._tick, "interval", seconds=self.interval, id="dream-check", next_run_time=first)
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
