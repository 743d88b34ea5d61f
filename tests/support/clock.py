"""A daemon's clock in tests: the machine's, plus what a test stepped it ahead by. A wait the daemon
times by its clock (a turn-end job is due EXTRACT_SETTLE_SECONDS after the hook, a job retried
EXTRACT_RETRY_SECONDS after its attempt) then passes as soon as the test steps over it, instead of
~0.5 s of every extraction test; until stepped, it reads exactly as `SystemClock` (dates stay today's)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from memoryd.base import limits

# How often a test looks again at what it waits for (a job, a run, a watcher event): 20 ms instead of 50 ms took ~15 ms
# off each wait, and each look is one loopback request; the deadlines stay what each test says.
POLL_SECONDS = 0.02


class SteppingClock:
    def __init__(self) -> None:
        self._ahead = 0.0
        self._lock = threading.Lock()

    def step(self, seconds: float) -> None:
        """Move all three clocks `seconds` ahead (a wait of that long, passed at once)."""
        with self._lock:
            self._ahead += seconds

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self._ahead)

    def time(self) -> float:
        return time.time() + self._ahead

    def monotonic(self) -> float:
        return time.monotonic() + self._ahead


def step_over_settle(daemon: Any, seconds: float = limits.EXTRACT_SETTLE_SECONDS) -> None:
    """A turn-end was just queued: step the daemon's clock past the job's settle delay (or `seconds`),
    when the daemon runs on a SteppingClock; otherwise the job runs after the real wait."""
    if isinstance(daemon.clock, SteppingClock):
        daemon.clock.step(seconds)
