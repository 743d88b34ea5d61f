"""`MemoryWatcher`: notices hand edits in memory dirs and re-indexes, debounced.

The watchdog handler only routes paths to a debounce timer; `MemoryDir.sync_index`
does the work (re-reading only the files seen changing). A broken hand-written file is reported by the scan,
never rewritten.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from watchdog.events import (
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from memoryd.base import limits
from memoryd.base.files import LOCK_FILENAME, TEMP_PREFIX
from memoryd.store.memdir import MemoryDir

log = logging.getLogger(__name__)
DEBOUNCE_SECONDS = 0.25
# What a change to a memory is made of; opens and closes (every read of every file, each save's
# lock and temp files) are never asked of the kernel: decoding them cost more CPU than the save.
EVENTS = [FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent]


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: MemoryWatcher, store: MemoryDir) -> None:
        self.watcher = watcher
        self.store = store

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            name = Path(str(raw)).name if raw else ""
            if (
                name.endswith(".md")
                and name != limits.INDEX_FILENAME
                and not name.startswith(TEMP_PREFIX)
                and name != LOCK_FILENAME
            ):
                self.watcher.touched(self.store, name, event.event_type)
                return


class MemoryWatcher:
    """Owns the observer; `watch(store)` is idempotent and skips dirs that don't exist yet."""

    def __init__(self, *, debounce_seconds: float = DEBOUNCE_SECONDS) -> None:
        self.debounce_seconds = debounce_seconds
        self._observer: Any = None
        self._watched: dict[Path, tuple[MemoryDir, Any]] = {}  # path → (store, watchdog's ObservedWatch)
        self._timers: dict[Path, threading.Timer] = {}  # one pending re-index per dir
        self._due: dict[Path, float] = {}  # when it may run: the last event + the debounce
        self._lock = threading.Lock()
        self.recent_events: deque[dict[str, str]] = deque(maxlen=100)
        self.reindex_count = 0

    def start(self) -> None:
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()

    def stop(self) -> None:
        with self._lock:
            for timer in self._timers.values():
                timer.cancel()
            self._timers.clear()
            self._due.clear()
            for store, _ in self._watched.values():
                store.set_watched(False)
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    def watch(self, store: MemoryDir) -> None:
        with self._lock:
            if self._observer is None or store.path in self._watched or not store.path.is_dir():
                return
            handle = self._observer.schedule(
                _Handler(self, store), str(store.path), recursive=False, event_filter=EVENTS
            )
            self._watched[store.path] = (store, handle)
            store.set_watched(True)

    def unwatch(self, store: MemoryDir) -> None:
        """Stop watching a dir the registry let go of (its next use watches the new instance)."""
        with self._lock:
            entry = self._watched.get(store.path)
            if entry is None or entry[0] is not store:
                return
            del self._watched[store.path]
            store.set_watched(False)
            self._due.pop(store.path, None)
            timer = self._timers.pop(store.path, None)
            if timer is not None:
                timer.cancel()
            if self._observer is not None:
                try:
                    self._observer.unschedule(entry[1])
                except (KeyError, ValueError):
                    pass

    @property
    def watched(self) -> list[str]:
        with self._lock:
            return sorted(str(p) for p in self._watched)

    def is_watching(self, path: Path) -> bool:
        """Whether changes in `path` reach `touched` (so readers may trust their caches)."""
        with self._lock:
            return self._observer is not None and path in self._watched

    def touched(self, store: MemoryDir, filename: str, kind: str) -> None:
        if not store.changed_on_disk(filename):
            return  # the echo of memoryd's own write: the table and index already have it
        self.recent_events.append({"dir": str(store.path), "file": filename, "event": kind})
        with self._lock:  # caches (the recall index) dropped just now; MEMORY.md is merged debounced
            self._due[store.path] = time.monotonic() + self.debounce_seconds
            if store.path not in self._timers:  # one timer per dir, not a thread per event (a bulk copy is 40,000)
                self._arm(store, self.debounce_seconds)

    def _arm(self, store: MemoryDir, delay: float) -> None:
        timer = threading.Timer(delay, self._reindex, args=(store,))
        timer.daemon = True
        self._timers[store.path] = timer
        timer.start()

    def _reindex(self, store: MemoryDir) -> None:
        with self._lock:
            if store.path not in self._timers:  # stopped or unwatched meanwhile
                return
            left = self._due.get(store.path, 0.0) - time.monotonic()
            if left > 0:  # events came meanwhile: wait until the dir is quiet for the debounce
                self._arm(store, left)
                return
            self._timers.pop(store.path, None)
            self._due.pop(store.path, None)
        try:
            if store.sync_index():
                log.info("re-indexed %s after a change on disk", store.path)
            self.reindex_count += 1
        except Exception:
            log.exception("re-index of %s failed", store.path)
