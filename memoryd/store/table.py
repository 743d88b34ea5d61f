"""`HeaderTable`: a memory dir's files as memoryd last saw them, with the lookups a save needs
(same type+name, the dir's dialect) kept current per file, so a save never walks every header.

It does NOT touch the disk; `memoryd.store.memdir` feeds it.
"""

from __future__ import annotations

import bisect
import sys
import threading
from collections import Counter

from memoryd.base.files import Key
from memoryd.store.model import InvalidFile, MemoryHeader
from memoryd.store.paths import slug_spellings

Entry = tuple[Key, "MemoryHeader | InvalidFile"]


def _name_keys_of(type_: str, name: str) -> tuple[str, ...]:
    """How a save may name a memory: its title case-folded, or its slug (Claude Code's names)."""
    return (f"{type_}\0t:{name.strip().casefold()}", *(f"{type_}\0s:{slug}" for slug in slug_spellings(name)))


def _name_keys(header: MemoryHeader) -> tuple[str, ...]:
    return _name_keys_of(header.type, header.name)


def _order_key(header: MemoryHeader) -> tuple[float, str]:
    return (-header.mtime, header.filename)


class HeaderTable:
    """filename → (key, header or InvalidFile), plus by-name and by-dialect indexes and the
    headers kept newest first (a list page never sorts 20,000 headers)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._entries: dict[str, Entry] = {}
        # hash of a name key -> its owner as a str (most names), several as a set; `find` checks the real key
        # (20,000 headers: the keys' strings would hold ~4 MB)
        self._by_name: dict[int, str | set[str]] = {}
        self._dialects: Counter[str] = Counter()
        self._order: list[MemoryHeader] = []
        self._invalid: dict[str, InvalidFile] = {}

    def get(self, filename: str) -> Entry | None:
        return self._entries.get(filename)

    def __contains__(self, filename: str) -> bool:
        return filename in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[MemoryHeader | InvalidFile]:
        with self.lock:
            return [item for _, item in self._entries.values()]

    def headers(self) -> list[MemoryHeader]:
        """Every valid memory, newest first (a copy: the table may change meanwhile)."""
        with self.lock:
            return list(self._order)

    def invalid(self) -> list[InvalidFile]:
        with self.lock:
            return [self._invalid[f] for f in sorted(self._invalid)]

    def set(self, filename: str, entry: Entry | None) -> None:
        """Record one file's new state (None: it is gone)."""
        with self.lock:
            old = self._entries.pop(filename, None)
            if old is not None:
                self._forget(filename, old[1])
            if entry is None:
                return
            self._entries[sys.intern(filename)] = entry
            item = entry[1]
            if isinstance(item, InvalidFile):
                self._invalid[filename] = item
                return
            self._dialects[item.dialect] += 1
            for key in map(hash, _name_keys(item)):
                owners = self._by_name.get(key)
                if owners is None:
                    self._by_name[key] = filename
                elif isinstance(owners, set):
                    owners.add(filename)
                elif owners != filename:
                    self._by_name[key] = {owners, filename}
            self._order.insert(bisect.bisect_left(self._order, _order_key(item), key=_order_key), item)

    def _forget(self, filename: str, item: MemoryHeader | InvalidFile) -> None:
        if isinstance(item, InvalidFile):
            self._invalid.pop(filename, None)
            return
        self._dialects[item.dialect] -= 1
        for key in map(hash, _name_keys(item)):
            owners = self._by_name.get(key)
            if isinstance(owners, set):
                owners.discard(filename)
                if len(owners) == 1:
                    self._by_name[key] = next(iter(owners))
            elif owners == filename:
                del self._by_name[key]
        i = bisect.bisect_left(self._order, _order_key(item), key=_order_key)
        if i < len(self._order) and self._order[i].filename == filename:
            del self._order[i]

    def find(self, type_: str, name: str) -> str | None:
        """The memory a save of (type, name) updates: same title, else same slug."""
        with self.lock:
            for key in _name_keys_of(type_, name):
                owners = self._by_name.get(hash(key))
                named = [
                    fn for fn in ([owners] if isinstance(owners, str) else owners or ()) if key in self._keys_of(fn)
                ]
                if named:
                    return min(named)
            return None

    def _keys_of(self, filename: str) -> tuple[str, ...]:
        entry = self._entries.get(filename)
        return _name_keys(entry[1]) if entry is not None and isinstance(entry[1], MemoryHeader) else ()

    def dialect_counts(self) -> Counter[str]:
        with self.lock:
            return +self._dialects
