"""`WriteEffects`: what every memory write sets off outside the store: metrics by source, one log
line, and a dir's first write gets watched (the store's one write path reports each write here)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memoryd.base.metrics import Metrics
from memoryd.store.memdir import WriteEvent
from memoryd.store.watcher import MemoryWatcher

log = logging.getLogger(__name__)


@dataclass(kw_only=True, eq=False)
class WriteEffects:
    metrics: Metrics
    watcher: MemoryWatcher | None  # None: hand edits are not watched (memory.watch = false)

    def __call__(self, event: WriteEvent) -> None:
        if event.op == "secret_refused":
            self.metrics.secrets_refused.labels(event.source).inc()
            log.info("refused %s (%s): it holds a secret", event.filename, event.source)
            return
        if event.op == "delete":
            self.metrics.memories_deleted.inc()
        else:
            self.metrics.memories_written.labels(event.source).inc()
        log.info("%s", write_line(event))
        if self.watcher is not None:
            self.watcher.watch(event.store)


def write_line(event: WriteEvent) -> str:
    """One log line a write: the file, what happened, who wrote it, how long a save took; never its text."""
    what = "deleted" if event.op == "delete" else "saved new" if event.created else "saved"
    took = f", {event.took_ms:.1f} ms" if event.took_ms is not None else ""
    return f"{what} {event.filename} ({event.source}{took}) in {event.store.path}"
