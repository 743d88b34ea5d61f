"""`IndexPublisher`: MEMORY.md kept in step with the header table, without losing other writers' lines.

It stages the index's new text beside a memory file so both are published together; after a
write of one file to an index memoryd wrote last, only that file's line moves (no rescan).
While other writers queue for the dir's lock, their lines are gathered and published with one
index write and one dir fsync (group commit); each writer answers once that write is durable.
"""

from __future__ import annotations

import builtins
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.base import limits
from memoryd.base.errors import Conflict
from memoryd.base.files import (
    DirLock,
    Key,
    Staged,
    SymlinkRefused,
    TargetMoved,
    TooLarge,
    atomic_write,
    fsync_dir,
    key_if_present,
    key_now,
    key_of,
    open_nofollow,
    publish,
    read_capped,
    stage,
)
from memoryd.store.index import IndexLayout, ServedIndex, merge_index, truncate_index
from memoryd.store.model import MemoryHeader
from memoryd.store.table import HeaderTable

log = logging.getLogger(__name__)
INDEX_BACKUP_FILENAME = limits.INDEX_FILENAME + ".before-memoryd"  # the index as found, before memoryd's first rewrite


def _moved_conflict(moved: TargetMoved) -> Conflict:
    return Conflict(
        f"{moved.path.name} changed on disk while memoryd wrote it (another editor?); nothing was written: try again."
    )


@dataclass
class IndexDraft:
    """MEMORY.md's text with one file's line moved, staged and syncing before the dir's lock; used
    only when the index built under the lock is these very lines from the same MEMORY.md."""

    staged: Staged
    lines: builtins.list[str]
    built_from: Key
    used: bool = False

    def discard(self) -> None:
        self.staged.discard()  # a published one is left alone


class IndexPublisher:
    """One dir's MEMORY.md: what memoryd last wrote there (key, layout, its own lines) and how to write it again."""

    def __init__(
        self, path: Path, *, table: HeaderTable, tmp_dir: Path, lock: DirLock, settled: Callable[[], None]
    ) -> None:
        self.path = path
        self.index_path = path / limits.INDEX_FILENAME
        self._table = table
        self._tmp_dir = tmp_dir
        self._key: Key | None = None
        self.layout: IndexLayout | None = None
        self._ours: dict[str, str] = {}  # the pointer lines memoryd wrote
        # Group commit: changes deferred while writers queue, numbered; a writer waits for its number.
        self._lock = lock
        self._settled = settled  # after a group publish: the dir's mtime as we left it (see HeaderCache.settled)
        self._deferred = 0  # the last deferred change's number
        self._published = 0  # every change up to this number is durable
        self._unwritten = False  # the layout holds deferred lines MEMORY.md does not have yet
        self._oldest = 0.0  # monotonic time of the oldest change not yet published
        self._durable = threading.Condition()
        self._mine = threading.local()  # the number this thread waits for after letting go of the lock
        lock.listen(self)

    def forget_layout(self) -> None:
        """The table moved without a write of ours: the next update merges from the index as it is."""
        self.layout = None

    def draft(self, *, changed: str, header: MemoryHeader | None) -> IndexDraft | None:
        """Before the dir's lock, beside a drafted memory file: MEMORY.md's new text staged and its
        fsync started with the file's, so a lone save waits for one round of fsyncs before the
        rename, not two (issue 42). A guess from the layout as it stands (read without the lock):
        `_stage_layout` uses it only when the lines built under the lock are the same."""
        layout, key = self.layout, self._key
        if layout is None or key is None or header is None or self._deferred != self._published:
            return None
        try:
            guess = layout.copy()
            if not guess.upsert(header):
                return None
            lines = guess.lines()
            staged = stage(self.index_path, "\n".join(lines) + "\n" if lines else "", tmp_dir=self._tmp_dir)
        except Exception:  # the layout moved under the copy: the lock's path builds it
            return None
        staged.expect = key
        staged.start_sync()
        return IndexDraft(staged, lines, key)

    # ------------------------------------------------------------------ group commit
    def should_defer(self) -> bool:
        """Whether a write under the lock may leave its index line to a group publish: others queue
        for the lock or a group is already gathering, and the index is as memoryd last wrote it."""
        if self._deferred == self._published and self._lock.waiting == 0:
            return False
        return self.layout is not None and self._key is not None and key_if_present(self.index_path) == self._key

    def publish_deferred(
        self, staged: builtins.list[Staged], *, changed: str, header: MemoryHeader | None, unlink: Path | None
    ) -> bool:
        """Publish `staged` alone (renamed, the dir not yet fsynced) and leave its index line to the
        group; returns whether the line moved."""
        try:
            publish(staged, unlink=unlink, sync_dir=False)
        except TargetMoved as moved:
            raise _moved_conflict(moved) from None
        return self.defer(changed=changed, header=header)

    def defer(self, *, changed: str, header: MemoryHeader | None) -> bool:
        """Record one file's line for the next group publish (its file is renamed, not yet
        dir-fsynced); returns whether the line moved. The caller holds the dir's lock."""
        moved = False
        if self.layout is not None:
            moved = self.layout.upsert(header) if header is not None else self.layout.drop(changed)
        self._unwritten = self._unwritten or moved or self.layout is None
        if self._deferred == self._published:
            self._oldest = time.monotonic()
        self._deferred += 1
        self._mine.number = self._deferred
        return moved

    def flush(self) -> None:
        """Publish every deferred line with one index write and one dir fsync (under the lock).
        A failure is logged, not raised: the files are written and the next update merges the index."""
        number = self._deferred
        if number == self._published:
            return
        try:
            if self._unwritten:
                self._publish_layout()
            fsync_dir(self.path)
            self._settled()
        except Exception:
            log.warning(
                "%s: the index was not updated after a group of writes; the next write merges it",
                self.index_path,
                exc_info=True,
            )
            self.layout = None
        finally:
            self._unwritten = False
            with self._durable:
                self._published = number
                self._durable.notify_all()

    def _publish_layout(self) -> None:
        layout = self.layout
        if layout is not None and self._key is not None and key_if_present(self.index_path) == self._key:
            staged = self._stage_layout(layout, self._key)
            try:
                publish([staged], sync_dir=False)
                self.written(staged, layout)
                return
            except TargetMoved:
                self.layout = None  # someone wrote MEMORY.md meanwhile: merge from what they wrote
        self.update()

    def releasing(self, idle: bool) -> None:
        """The lock's last holder publishes the group when nobody queues behind it, or when the
        group's oldest change has waited `GROUP_COMMIT_SECONDS`."""
        if self._deferred != self._published and (
            idle or time.monotonic() - self._oldest >= limits.GROUP_COMMIT_SECONDS
        ):
            self.flush()

    def released(self) -> None:
        """A writer whose line was deferred answers only once the group holding it is durable."""
        number = getattr(self._mine, "number", 0)
        if not number:
            return
        self._mine.number = 0
        with self._durable:
            done = self._durable.wait_for(lambda: self._published >= number, timeout=limits.GROUP_COMMIT_WAIT_SECONDS)
        if not done:  # no holder published it (should not happen): publish it ourselves
            with self._lock:
                self.flush()

    # ------------------------------------------------------------------ merging
    def _read(self) -> builtins.list[str] | None:
        """MEMORY.md's lines; None when it is a link or not text (never rewritten)."""
        try:
            text = read_capped(self.index_path, limits.MEMORY_FILE_MAX_BYTES)[0].decode("utf-8")
        except FileNotFoundError:
            return []
        except SymlinkRefused:
            log.warning(
                "%s is a symbolic link; the index was not rewritten (replace the link with a file)", self.index_path
            )
            return None
        except (UnicodeDecodeError, IsADirectoryError, TooLarge):
            log.warning("%s is not a UTF-8 regular file of at most 1 MB; the index was not rewritten", self.index_path)
            return None
        return text.rstrip("\n").split("\n") if text.strip() else []

    def update(self, *, changed: str | None = None, header: MemoryHeader | None = None) -> bool:
        """Bring MEMORY.md up to date (renamed into place; the caller fsyncs the dir)."""
        index = self.publish_with([], changed=changed, header=header, sync_dir=False)
        if index is None:
            return False
        self.written(*index)
        return True

    def publish_with(
        self,
        staged: builtins.list[Staged],
        *,
        changed: str | None,
        header: MemoryHeader | None,
        unlink: Path | None = None,
        sync_dir: bool,
        drafted: IndexDraft | None = None,
    ) -> tuple[Staged, IndexLayout] | None:
        """Publish `staged` with MEMORY.md's new text (`drafted`'s when it is that text); when
        someone else (an agent, an editor) writes MEMORY.md meanwhile, merge again from what they
        wrote instead of overwriting it."""
        for _ in range(limits.WRITE_CHANGED_RETRIES):
            index = self._stage(changed=changed, header=header, drafted=drafted)
            try:
                if staged or index or unlink:
                    publish(staged + ([index[0]] if index else []), unlink=unlink, sync_dir=sync_dir)
                return index
            except TargetMoved as moved:
                if index:
                    index[0].discard()
                self.layout = None  # the next merge starts from the index as it is now
                if moved.path != self.index_path:
                    raise _moved_conflict(moved) from None
        raise Conflict(
            f"{limits.INDEX_FILENAME} keeps changing on disk while memoryd updates it (another "
            f"editor?); try again when it is quiet."
        )

    def _stage(
        self, *, changed: str | None = None, header: MemoryHeader | None = None, drafted: IndexDraft | None = None
    ) -> tuple[Staged, IndexLayout] | None:
        """MEMORY.md's new text staged, keeping every line memoryd did not write; None when it
        does not change. After a write of one file to an index memoryd wrote last, that file's
        line moves alone (no rescan, no re-read)."""
        layout = self.layout
        if (
            layout is not None
            and changed is not None
            and self._key is not None
            and key_if_present(self.index_path) == self._key
        ):
            moved = layout.upsert(header) if header is not None else layout.drop(changed)
            if not moved:
                return None
            return self._stage_layout(layout, self._key, drafted), layout
        read_key = key_now(
            self.index_path
        )  # before the read (ABSENT: none yet): a write in between is caught at publish
        current = self._read()
        if current is None:
            return None
        removed = frozenset({changed}) if changed is not None and header is None else frozenset()
        layout = merge_index(current, self._table.headers(), self._ours, removed=removed)
        mine = set(self._ours.values()) | set(layout.ours().values())
        self._ours, self.layout = layout.ours(), layout
        lines = layout.lines()
        if lines == current:
            self._key = key_if_present(self.index_path)
            return None
        foreign = [line for line in current if line.strip() and line not in mine]
        backup = self.path / INDEX_BACKUP_FILENAME
        if foreign and not os.path.lexists(backup):  # the first rewrite of an index someone else wrote
            atomic_write(backup, "\n".join(current) + "\n")
        return self._stage_layout(layout, read_key), layout

    def _stage_layout(self, layout: IndexLayout, built_from: Key, drafted: IndexDraft | None = None) -> Staged:
        lines = layout.lines()
        if drafted is not None and not drafted.used and drafted.built_from == built_from and drafted.lines == lines:
            drafted.used = True  # once: a retry after someone else's write stages what it merged
            return drafted.staged
        staged = stage(self.index_path, "\n".join(lines) + "\n" if lines else "", tmp_dir=self._tmp_dir)
        staged.expect = built_from
        return staged

    def written(self, staged: Staged, layout: IndexLayout) -> None:
        """The staged index was published: remember it as ours (with every deferred line in it)."""
        self._key, self._ours = key_of(staged.stat), layout.ours()
        self._unwritten = False

    def served(self) -> ServedIndex:
        """MEMORY.md as an agent gets it: truncated at 200 lines / 25,000 bytes with the warning."""
        try:  # what is served is cut at INDEX_MAX_BYTES anyway: a larger MEMORY.md is never read whole
            with open_nofollow(self.index_path) as fh:
                raw = fh.read(limits.MEMORY_FILE_MAX_BYTES).decode("utf-8", errors="replace")
        except FileNotFoundError:
            raw = ""
        except (SymlinkRefused, UnicodeDecodeError, IsADirectoryError):
            log.warning("%s is not a readable regular file; serving an empty index", self.index_path)
            raw = ""
        return truncate_index(raw)
