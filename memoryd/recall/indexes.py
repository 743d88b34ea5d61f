"""One `LexicalIndex` per memory directory, kept in step with the files by (mtime, size):
only new or changed files are read and tokenised; writes through `MemoryDir` update it at once."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from memoryd.errors import MemorydError
from memoryd.recall.ranker import LexicalIndex, analyse
from memoryd.store import MemoryDir
from memoryd.store.model import MemoryHeader

log = logging.getLogger(__name__)


class StoreIndexes:
    """The local ranker's indexes, by memory dir."""

    def __init__(self) -> None:
        self._indexes: dict[Path, LexicalIndex] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._indexes)

    def documents(self) -> int:
        with self._lock:
            return sum(len(i) for i in self._indexes.values())

    def _index_of(self, store: MemoryDir) -> tuple[LexicalIndex, bool]:
        with self._lock:
            index = self._indexes.get(store.path)
            if index is not None:
                return index, False
            index = self._indexes[store.path] = LexicalIndex()
        store.on_change.append(lambda s, filename: self._update_one(s, index, filename))
        return index, True

    def refresh(self, store: MemoryDir) -> tuple[LexicalIndex, list[MemoryHeader]]:
        """The store's index, brought up to date; also returns every valid header (newest first)."""
        index, _ = self._index_of(store)
        headers = store.all_headers()
        with index.lock:
            live = {h.filename for h in headers}
            for filename in [f for f in index.docs if f not in live]:
                index.remove(filename)
            for h in headers:
                doc = index.docs.get(h.filename)
                if doc is None or doc.key != _key(h):
                    self._load(store, index, h)
        return index, headers

    def _load(self, store: MemoryDir, index: LexicalIndex, header: MemoryHeader) -> None:
        try:
            memory = store.get(header.filename)
        except MemorydError:  # vanished or turned invalid between the scan and the read
            index.remove(header.filename)
            return
        index.put(analyse(header.filename, _key(header), memory.name, memory.description, memory.body))

    def _update_one(self, store: MemoryDir, index: LexicalIndex, filename: str) -> None:
        """After a write through MemoryDir: re-read that one file (or drop it)."""
        if not store.exists(filename):
            index.remove(filename)
            return
        for h in store.all_headers():
            if h.filename == filename:
                self._load(store, index, h)
                return
        index.remove(filename)


def _key(header: MemoryHeader) -> tuple[int, int]:
    return (int(header.mtime * 1e9), 0)
