"""`HeaderCache`: one memory dir's headers, kept current by stat instead of re-reading.

Reads re-stat every file (or, in a big watched dir, only what changed); writes patch only the
file they wrote (no rescan). Another writer's change is noticed by key (mtime, size) or by the
dir's mtime, and `on_foreign_change` is told, so the index merges from scratch next time.
"""

from __future__ import annotations

import os
import stat
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memoryd.base import limits
from memoryd.base.files import Key, key_of
from memoryd.store.headers import SYMLINK_REFUSAL, not_a_file, parse_header, read_text
from memoryd.store.model import InvalidFile, MemoryHeader
from memoryd.store.table import Entry, HeaderTable


class HeaderCache:
    """The header table of one dir and when to trust it."""

    def __init__(self, path: Path, *, table: HeaderTable, on_foreign_change: Callable[[], None]) -> None:
        self.path = path
        self._dir = str(path)
        self.table = table
        self.lock = table.lock
        self._on_foreign_change = on_foreign_change
        self._loaded = False
        self._dir_key: int | None = None  # the dir's mtime_ns after our last write or sweep: another writer changes it
        self._dirty: set[str] = set()
        self._in_flight: set[str] = set()  # files a write of ours is changing: a listing read meanwhile is not news
        # each file's key after our last write, to tell the watcher's echoes (seconds later): the last writes only
        self._written: OrderedDict[str, Key | None] = OrderedDict()
        self.watched = False  # set by MemoryWatcher: changes on disk are reported by name
        self._swept_at = 0.0  # monotonic time of the last stat of every file

    def read_entry(self, filename: str) -> Entry | None:
        """One file read (never through a link); the key is that of the text read; None: gone."""
        try:
            text, st = read_text(os.path.join(self._dir, filename))
        except (FileNotFoundError, NotADirectoryError):
            return None
        key = key_of(st) if st is not None else (0, -1)
        if isinstance(text, InvalidFile):
            return key, text
        assert st is not None
        return key, parse_header(filename, self.path, text, st.st_mtime).header

    def shared_header(self, filename: str, key: Key, header: MemoryHeader) -> tuple[MemoryHeader, Key]:
        """One copy of a header and of its stat key in memory for recall and the store (20,000 headers are
        ~15 MB, their keys ~2 MB): the table's own when it holds this version of the file, else these,
        recorded as that version."""
        with self.lock:
            cached = self.table.get(filename)
            if cached is not None and cached[0] == key and isinstance(cached[1], MemoryHeader):
                return cached[1], cached[0]
            if cached is None or cached[0] != key:
                self.table.set(filename, (key, header))
                self._on_foreign_change()  # the table moved without a write of ours
            return header, key

    def stat_entry(self, filename: str) -> Entry | None:
        """One file's table entry from an lstat, re-read only when its key changed."""
        try:
            st = os.lstat(os.path.join(self._dir, filename))
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            return (key_of(st), InvalidFile(filename, SYMLINK_REFUSAL))
        if not stat.S_ISREG(st.st_mode):  # listed with the fix, never opened (issue 41: a FIFO went unreported)
            return (key_of(st), InvalidFile(filename, not_a_file(st.st_mode)))
        cached = self.table.get(filename)
        if cached is not None and cached[0] == key_of(st):
            return cached
        return self.read_entry(filename)

    @contextmanager
    def writing(self, filename: str) -> Iterator[None]:
        """A write of ours changes `filename` (its table entry, then the disk): reads that list the
        dir meanwhile leave that name alone, or a delete's file came back into the table between
        its entry going and its unlink, and stayed listed and recalled until the next sweep."""
        with self.lock:
            self._in_flight.add(filename)
        try:
            yield
        finally:
            with self.lock:
                self._in_flight.discard(filename)

    def refresh(self) -> None:
        """Stat every `.md` file; re-read only the ones whose mtime or size changed."""
        self._note_dir_mtime()
        entries = self._listing()
        with self.lock:
            seen: set[str] = set(self._in_flight)
            changed = False
            for name, regular in entries.items():
                if name in self._in_flight:
                    continue
                # A file first seen is read at once (the read's fstat gives its key); a known one
                # is re-read only when its lstat key changed.
                entry = self.read_entry(name) if regular and name not in self.table else self.stat_entry(name)
                if entry is not None:
                    seen.add(name)
                    if entry is not self.table.get(name):
                        self.table.set(name, entry)
                        changed = True
            for gone in [item.filename for item in self.table.items() if item.filename not in seen]:
                if self._still_gone(gone):
                    self.table.set(gone, None)
                    changed = True
            self._dirty.clear()
            self._loaded = True
            self._swept_at = time.monotonic()
            if changed:
                self._on_foreign_change()  # someone else's changes

    def _still_gone(self, filename: str) -> bool:
        """A name missing from a listing read before the table's lock: a write that finished since
        may have made it (dropped, a new memory went unlisted until the next sweep)."""
        return not os.path.lexists(os.path.join(self._dir, filename))

    def _note_dir_mtime(self) -> None:
        """The dir's mtime, taken before a listing (a later change bumps it). A read's listing runs
        beside writes: never step back from the mtime a write settled on."""
        mtime = self.dir_mtime()
        self._dir_key = mtime if self._dir_key is None or mtime is None else max(mtime, self._dir_key)

    def _listing(self) -> dict[str, bool]:
        """The memory files' names, each with whether it is a regular file (no stat)."""
        try:
            with os.scandir(self.path) as it:
                return {
                    e.name: e.is_file(follow_symlinks=False)
                    for e in it
                    if e.name.endswith(".md") and e.name != limits.INDEX_FILENAME and not e.name.startswith(".")
                }
        except (FileNotFoundError, NotADirectoryError):
            return {}

    def _follow_listing(self) -> None:
        """A watched dir's listing moved: read the files that came and drop the ones that went; the
        watcher names files edited in place. A sweep's stat of every file (5,000: ~20 ms under the
        table's lock) on each write in flight stalled every writer behind a reader (issue 31)."""
        self._note_dir_mtime()
        names = self._listing()
        with self.lock:
            known = {item.filename for item in self.table.items()}
            changed = False
            for name in names.keys() - known - self._in_flight:
                entry = self.stat_entry(name)
                if entry is not None:
                    self.table.set(name, entry)
                    changed = True
            for gone in known - names.keys() - self._in_flight:
                if self._still_gone(gone):
                    self.table.set(gone, None)
                    changed = True
            if changed:
                self._on_foreign_change()

    def current(self) -> None:
        """Bring the table a write works on up to date: loaded once, then patched, rescanned only
        when another writer changed the directory listing (its mtime) since our last write; in a
        watched dir only the names that came or went are read."""
        if not self._loaded or self._dir_key is None:
            self.refresh()
            return
        if self.dir_mtime() != self._dir_key:
            if not self.watched:
                self.refresh()
                return
            self._follow_listing()
        with self.lock:
            for name in list(self._dirty - self._in_flight):
                self._dirty.discard(name)
                entry = self.stat_entry(name)
                if entry is not self.table.get(name):  # not the echo of our own write
                    self.table.set(name, entry)
                    self._on_foreign_change()

    def dir_mtime(self) -> int | None:
        try:
            return os.stat(self.path).st_mtime_ns
        except OSError:
            return None

    def fresh(self) -> None:
        """Bring the table up to date for a read. A small dir: stat every file (a hand edit in
        place changes no dir mtime). A big one (a stat of 20,000 files costs ~60 ms): the files
        the watcher named and a changed listing (the dir's mtime), with a full sweep at most once
        a second (unwatched) or a minute (watched: events name what changed), as recall does."""
        every = limits.STORE_WATCHED_SWEEP_SECONDS if self.watched else limits.RECALL_WATCHED_SWEEP_SECONDS
        trust = (
            self._loaded
            and len(self.table) >= limits.STORE_WATCHED_TRUST_MIN_FILES
            and time.monotonic() - self._swept_at < every
        )
        if trust:
            self.current()
        else:
            self.refresh()

    def set_watched(self, on: bool) -> None:
        """The watcher reports this dir's changes by name from now on (or no longer); the next
        read sweeps every file once, for what changed before."""
        self.watched, self._swept_at = on, 0.0

    def header(self, filename: str) -> MemoryHeader | None:
        """A memory's header, from the table when it holds one, else from the file."""
        entry = self.table.get(filename)
        if entry is None:
            entry = self.stat_entry(filename)
        return entry[1] if entry is not None and isinstance(entry[1], MemoryHeader) else None

    def wrote(self, filename: str, key: Key | None) -> None:
        """Our own write left `filename` at `key` (None: removed): its watcher echo is not news."""
        self._written[filename] = key
        self._written.move_to_end(filename)
        if len(self._written) > limits.WRITE_ECHOES_KEPT:
            self._written.popitem(last=False)

    def settled(self) -> None:
        """After our write: the dir's mtime as we left it (another writer's listing change shows)."""
        self._dir_key = self.dir_mtime()

    def saw_change(self, filename: str, key: Key | None) -> bool:
        """A change the watcher saw: True unless the file is as memoryd last wrote it."""
        echo = filename in self._written and self._written[filename] == key
        if not echo:
            with self.lock:
                self._dirty.add(filename)
        return not echo
