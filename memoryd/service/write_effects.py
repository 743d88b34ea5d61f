"""`WriteEffects`: what every memory write sets off outside the store: metrics by source, and a
dir's first write gets watched (the store's one write path reports each write here)."""

from __future__ import annotations

from memoryd.base.metrics import Metrics
from memoryd.store.memdir import WriteEvent
from memoryd.store.watcher import MemoryWatcher


class WriteEffects:
    def __init__(self, *, metrics: Metrics, watcher: MemoryWatcher | None) -> None:
        self.metrics = metrics
        self.watcher = watcher  # None: hand edits are not watched (memory.watch = false)

    def __call__(self, event: WriteEvent) -> None:
        if event.op == "secret_refused":
            self.metrics.secrets_refused.labels(event.source).inc()
            return
        if event.op == "delete":
            self.metrics.memories_deleted.inc()
        else:
            self.metrics.memories_written.labels(event.source).inc()
        if self.watcher is not None:
            self.watcher.watch(event.store)
