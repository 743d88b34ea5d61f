"""`ViewKeeper`: what recall derives from a store's index (what each memory applies to) brought up to date off the
request path after saves, so a tool call after an import or a team sync does not derive thousands of files itself
(issue 52: the first PreToolUse after 2,000 quick saves spent 0.8 s on it). It does not rank, embed or write."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.base.process import lower_priority
from memoryd.store import MemoryDir

log = logging.getLogger(__name__)
# after a save, the keeper waits this long for more: under a stream (an import, ~60 saves a second) it brings the views
# up twice a second (~10-25 ms each at 5,000 memories), and a tool call derives the few saved since
SETTLE_SECONDS = 0.5
KEEPER_NICE = 10  # like the embedding thread: a request's thread wins a contended core


@dataclass(kw_only=True, eq=False)
class ViewKeeper:
    """Calls `keep(store)` for each store whose index changed, at most once per SETTLE_SECONDS, on its own niced
    thread."""

    keep: Callable[[MemoryDir], object]

    def __post_init__(self) -> None:
        self._due: dict[Path, MemoryDir] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()  # set at close: also ends the settle wait, so a stop never sits it out

    def due(self, store: MemoryDir) -> None:
        """The store's index changed (saves, a background pass): its views are due (the thread starts at the first)."""
        if self._closed.is_set():
            return
        with self._lock:
            self._due[store.path] = store
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="recall-views", daemon=True)
                self._thread.start()
        self._wake.set()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        lower_priority(KEEPER_NICE)
        while not self._closed.is_set():
            self._wake.wait()
            self._closed.wait(SETTLE_SECONDS)
            self._wake.clear()
            with self._lock:
                due, self._due = list(self._due.values()), {}
            for store in due:
                if self._closed.is_set():
                    return
                try:
                    self.keep(store)
                except Exception:
                    log.exception("recall: bringing the views of %s up to date failed", store.path)
