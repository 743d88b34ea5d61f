"""`StoreIndex`: the ranker's view of one memory directory, and the cheap directory passes that
tell `StoreIndexes` (recall/indexes.py) which of its files changed."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.base import limits
from memoryd.recall.dense import DenseIndex
from memoryd.recall.ranker import LexicalIndex
from memoryd.store.model import MemoryHeader

Signature = dict[str, tuple[int, int]]


@dataclass
class StoreIndex:
    """The ranker's view of one directory: the index, and the header of every indexed file."""

    index: LexicalIndex = field(default_factory=LexicalIndex)
    files: Signature = field(default_factory=dict)  # what the index holds, by (mtime_ns, size)
    by_name: dict[str, MemoryHeader] = field(default_factory=dict)
    built: bool = False  # a first full pass is done
    building: bool = False  # a background pass is running
    dirty: set[str] = field(default_factory=set)  # files named by writes and watcher events since
    dense: DenseIndex = field(default_factory=DenseIndex)
    # filename -> (header, hash of its text to embed) of the memories waiting for a vector (recall/embedding.py)
    hashed: dict[str, tuple[MemoryHeader, bytes]] = field(default_factory=dict)
    dense_synced: int = -1  # the `_changes` the dense index last caught up with
    owed: dict[str, int] = field(default_factory=dict)  # saved through the store, vector not yet put: name -> write
    swept_at: float = 0.0  # monotonic time of the last directory sweep
    generation: int = 0  # how many times the index was started over (`StoreIndexes._forget`)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _changes: int = 0

    @property
    def version(self) -> tuple[int, int]:
        """Changes with every change of what the index holds: a view built from it is current while this is equal."""
        return self.generation, self._changes

    def snapshot(self) -> list[MemoryHeader]:
        """Every indexed memory, in no order: what recall needs per request (sorting 5,000 headers
        after every write cost each recall ~5 ms while saves came in)."""
        with self.lock:
            return list(self.by_name.values())


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


def count_files(path: Path) -> int:
    """How many entries the directory holds (no stat: a few ms at 20,000)."""
    try:
        with os.scandir(path) as it:
            return sum(1 for _ in it)
    except FileNotFoundError:
        return 0
