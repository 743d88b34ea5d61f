"""The one home of time. `Daemon` builds one `Clock` and hands it to every part that stamps,
ages or gates on time, so a test moves time for all of them at once with a `ManualClock`.

Real waits (thread joins, poll loops, APScheduler's timer) stay on `time.monotonic`: a
frozen test clock must never stall them.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def time(self) -> float:
        """The current time in epoch seconds (what SQLite rows and file mtimes hold)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for ages and cache lifetimes."""
        ...


class SystemClock:
    """The machine's clocks."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock:
    """A test clock: wall time stands still until `advance` or `set` moves it. Its monotonic
    time keeps running with the machine's (caches still age) plus every advance."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware start, e.g. datetime(..., tzinfo=timezone.utc)")
        self._ahead = 0.0
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def time(self) -> float:
        return self.now().timestamp()

    def monotonic(self) -> float:
        with self._lock:
            return time.monotonic() + self._ahead

    def advance(self, delta: timedelta | float) -> datetime:
        """Move time forward (seconds or a timedelta); returns the new now."""
        seconds = delta.total_seconds() if isinstance(delta, timedelta) else float(delta)
        if seconds < 0:
            raise ValueError("a clock only advances; use set() to jump to an earlier wall time")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            self._ahead += seconds
            return self._now

    def set(self, when: datetime) -> None:
        """Jump wall time to `when` (monotonic time is not moved back)."""
        with self._lock:
            self._now = when


SYSTEM_CLOCK = SystemClock()
