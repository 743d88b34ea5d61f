"""One `LexicalIndex` per memory directory, kept in step with the files by (mtime, size):
only new or changed files are read and tokenised; writes through `MemoryDir` update it at once.

Each request costs one `scandir` sweep (big watched dirs: at most one a second, the watcher's
events invalidating in between); when no file changed the cached headers and parsed memories
are reused, so recall never parses YAML for files it has seen.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from memoryd import limits
from memoryd.errors import MemorydError
from memoryd.recall.dense import DenseIndex, Encoder, embed_text
from memoryd.recall.ranker import LexicalIndex, analyse
from memoryd.store import MemoryDir
from memoryd.store.model import Memory, MemoryHeader

log = logging.getLogger(__name__)
Signature = dict[str, tuple[int, int]]


@dataclass
class StoreIndex:
    """The ranker's view of one directory: index, headers and parsed memories at a signature."""

    index: LexicalIndex = field(default_factory=LexicalIndex)
    signature: Signature | None = None
    headers: list[MemoryHeader] = field(default_factory=list)
    memories: dict[str, tuple[float, Memory]] = field(default_factory=dict)  # filename → (mtime, memory)
    dense: DenseIndex = field(default_factory=DenseIndex)
    dense_mtime: dict[str, float] = field(default_factory=dict)
    swept_at: float = 0.0  # monotonic time of the last directory sweep
    lock: threading.Lock = field(default_factory=threading.Lock)


def sweep(path: Path) -> Signature:
    """(mtime_ns, size) of every candidate memory file, by name: one cheap directory pass."""
    out: Signature = {}
    try:
        with os.scandir(path) as it:
            for e in it:
                name = e.name
                if name.endswith(".md") and name != limits.INDEX_FILENAME and name[0] != ".":
                    try:
                        st = e.stat()
                    except FileNotFoundError:
                        continue
                    out[name] = (st.st_mtime_ns, st.st_size)
    except FileNotFoundError:
        pass
    return out


class StoreIndexes:
    """The local ranker's indexes, by memory dir."""

    def __init__(self, encoder: Encoder | None = None, *, is_watched: Callable[[Path], bool] | None = None) -> None:
        self.encoder = encoder or Encoder()
        self.is_watched = is_watched or (lambda path: False)
        # A watched store this big is swept at most once per RECALL_WATCHED_SWEEP_SECONDS: the
        # watcher invalidates it on every change, and the sweep is most of a request's cost there.
        self.watched_sweep_min_files = limits.RECALL_WATCHED_SWEEP_MIN_FILES
        self.sweeps = 0
        self._items: dict[Path, StoreIndex] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def documents(self) -> int:
        with self._lock:
            return sum(len(i.index) for i in self._items.values())

    def _item(self, store: MemoryDir) -> StoreIndex:
        with self._lock:
            item = self._items.get(store.path)
            if item is not None:
                return item
            item = self._items[store.path] = StoreIndex()
        store.on_change.append(lambda s, filename: self._invalidate(item))
        return item

    def refresh(self, store: MemoryDir) -> StoreIndex:
        """The store's index, brought up to date (headers newest first)."""
        item = self._item(store)
        if self._trust_watcher(store, item):
            with item.lock:
                if item.signature is not None:
                    if self.encoder.ready:
                        self._sync_dense(item)
                    return item
        signature = sweep(store.path)
        self.sweeps += 1
        with item.lock:
            item.swept_at = time.monotonic()
            if signature != item.signature:
                self._reload(store, item, signature)
            if self.encoder.ready:
                self._sync_dense(item)
            return item

    def _trust_watcher(self, store: MemoryDir, item: StoreIndex) -> bool:
        """Skip the sweep: a big store, watched, not invalidated, swept less than a second ago."""
        signature = item.signature
        return (signature is not None and len(signature) >= self.watched_sweep_min_files
                and time.monotonic() - item.swept_at < limits.RECALL_WATCHED_SWEEP_SECONDS and self.is_watched(store.path))

    def _reload(self, store: MemoryDir, item: StoreIndex, signature: Signature) -> None:
        headers = store.all_headers()
        index = item.index
        live = {h.filename: h for h in headers}
        for filename in [f for f in index.docs if f not in live]:
            index.remove(filename)
            item.memories.pop(filename, None)
        for h in headers:
            cached = item.memories.get(h.filename)
            if cached is None or cached[0] != h.mtime or h.filename not in index.docs:
                self._load(store, item, h)
        item.headers, item.signature = headers, signature

    def _sync_dense(self, item: StoreIndex) -> None:
        """Embed memories that are new or changed since their last embedding (batched)."""
        for fn in [f for f in item.dense_mtime if f not in item.memories]:
            item.dense.remove(fn)
            del item.dense_mtime[fn]
        stale = [(fn, mt, m) for fn, (mt, m) in item.memories.items() if item.dense_mtime.get(fn) != mt]
        if stale:
            vectors = self.encoder.encode([embed_text(m.name, m.description) for _, _, m in stale])
            item.dense.put_many([fn for fn, _, _ in stale], vectors)
            item.dense_mtime.update({fn: mt for fn, mt, _ in stale})

    def memory(self, store: MemoryDir, filename: str) -> Memory:
        """A memory as last indexed (no re-parse), else read from the store."""
        item = self._item(store)
        with item.lock:
            cached = item.memories.get(filename)
        return cached[1] if cached is not None else store.get(filename)

    def _load(self, store: MemoryDir, item: StoreIndex, header: MemoryHeader) -> None:
        try:
            memory = store.get(header.filename)
        except MemorydError:  # vanished or turned invalid between the scan and the read
            item.index.remove(header.filename)
            item.memories.pop(header.filename, None)
            return
        item.memories[header.filename] = (header.mtime, memory)
        item.index.put(analyse(header.filename, memory.name, memory.description, memory.body))

    def refresh_needed(self, store: MemoryDir) -> bool:
        """Whether the next request re-sweeps the store (never indexed, or invalidated since)."""
        item = self._item(store)
        with item.lock:
            return item.signature is None

    def _invalidate(self, item: StoreIndex) -> None:
        """After a write through MemoryDir: the next request re-sweeps and re-reads what changed."""
        with item.lock:
            item.signature = None
