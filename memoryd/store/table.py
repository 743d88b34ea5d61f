"""`HeaderTable`: a memory dir's files as memoryd last saw them, with the lookups a save needs
(same type+name, the dir's dialect) kept current per file, so a save never walks every header.

It does NOT touch the disk; `memoryd.store.memdir` feeds it.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Iterator

from memoryd.store.model import InvalidFile, MemoryHeader
from memoryd.store.paths import slugify

Key = tuple[int, int]  # (mtime_ns, size): "changed since read" without reading
Entry = tuple[Key, "MemoryHeader | InvalidFile"]


def _name_keys(header: MemoryHeader) -> tuple[tuple[str, str], ...]:
    """How a save may name this memory: its title case-folded, or its slug (Claude Code's names)."""
    return ((header.type, "t:" + header.name.strip().casefold()), (header.type, "s:" + slugify(header.name)))


class HeaderTable:
    """filename → (key, header or InvalidFile), plus by-name and by-dialect indexes."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._entries: dict[str, Entry] = {}
        self._by_name: dict[tuple[str, str], set[str]] = {}
        self._dialects: Counter[str] = Counter()

    def get(self, filename: str) -> Entry | None:
        return self._entries.get(filename)

    def __contains__(self, filename: str) -> bool:
        return filename in self._entries

    def items(self) -> list[MemoryHeader | InvalidFile]:
        with self.lock:
            return [item for _, item in self._entries.values()]

    def headers(self) -> Iterator[MemoryHeader]:
        return (item for _, item in list(self._entries.values()) if isinstance(item, MemoryHeader))

    def replace_all(self, entries: dict[str, Entry]) -> None:
        with self.lock:
            self._entries, self._by_name, self._dialects = {}, {}, Counter()
            for filename, entry in entries.items():
                self.set(filename, entry)

    def set(self, filename: str, entry: Entry | None) -> None:
        """Record one file's new state (None: it is gone)."""
        with self.lock:
            old = self._entries.pop(filename, None)
            if old is not None and isinstance(old[1], MemoryHeader):
                self._dialects[old[1].dialect] -= 1
                for key in _name_keys(old[1]):
                    owners = self._by_name.get(key)
                    if owners is not None:
                        owners.discard(filename)
                        if not owners:
                            del self._by_name[key]
            if entry is None:
                return
            self._entries[filename] = entry
            if isinstance(entry[1], MemoryHeader):
                self._dialects[entry[1].dialect] += 1
                for key in _name_keys(entry[1]):
                    self._by_name.setdefault(key, set()).add(filename)

    def find(self, type_: str, name: str) -> str | None:
        """The memory a save of (type, name) updates: same title, else same slug."""
        with self.lock:
            for key in ((type_, "t:" + name.strip().casefold()), (type_, "s:" + slugify(name))):
                owners = self._by_name.get(key)
                if owners:
                    return min(owners)
            return None

    def dialect_counts(self) -> Counter[str]:
        with self.lock:
            return +self._dialects
