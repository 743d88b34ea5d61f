"""`Activity`: an in-process publish/subscribe of memory work as it happens (recalls, extractions,
dream runs), for the web view's live page. It keeps the last few events so a page opened now shows
what came just before. It does NOT persist anything (the recall log and the job/run tables do) nor
know HTTP: subscribers are plain callables, called on the publisher's thread."""

from __future__ import annotations

import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoryd.base import limits

log = logging.getLogger(__name__)

RECALL, EXTRACTION, DREAM = "recall", "extraction", "dream"


@dataclass(frozen=True)
class Event:
    seq: int
    kind: str  # recall | extraction | dream
    at: float  # unix seconds
    memory_dir: str
    data: dict[str, Any] = field(default_factory=dict)


# A subscriber gets each Event, then None once when the activity closes (the daemon stops).
Subscriber = Callable[[Event | None], None]


class Activity:
    """Thread-safe: recall runs on request threads, extraction and dream on their workers."""

    def __init__(self, *, clock: Callable[[], float], keep: int = limits.ACTIVITY_KEPT) -> None:
        self._clock = clock
        self._recent: deque[Event] = deque(maxlen=keep)
        self._subscribers: list[Subscriber] = []
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    def publish(self, kind: str, memory_dir: str, data: dict[str, Any]) -> Event:
        with self._lock:
            event = Event(next(self._seq), kind, self._clock(), memory_dir, data)
            self._recent.append(event)
            subscribers = list(self._subscribers)
        for deliver in subscribers:
            try:
                deliver(event)
            except Exception:  # a broken page must never fail the recall or job that published
                log.exception("an activity subscriber failed")
        return event

    def recent(self, memory_dir: str | None = None) -> list[Event]:
        """The kept events, newest first (of one memory dir when given)."""
        with self._lock:
            events = list(self._recent)
        return [e for e in reversed(events) if memory_dir is None or e.memory_dir == memory_dir]

    def subscribe(self, deliver: Subscriber) -> Callable[[], None]:
        """Start calling `deliver` with each new event; returns the function that stops it."""
        with self._lock:
            self._subscribers.append(deliver)

        def unsubscribe() -> None:
            with self._lock:
                if deliver in self._subscribers:
                    self._subscribers.remove(deliver)

        return unsubscribe

    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def close(self) -> None:
        """Tell every subscriber the daemon is stopping (live pages end their streams)."""
        with self._lock:
            subscribers, self._subscribers = self._subscribers, []
        for deliver in subscribers:
            try:
                deliver(None)
            except Exception:
                log.exception("an activity subscriber failed")
