"""`WritePath`: the one write of one memory file, and of MEMORY.md with it.

Read the file, build its new text, re-read when it changed meanwhile, back up, stage and publish
it together with the index (or, while other writers queue, leave its index line to one group
publish), then patch the header table: no re-read, no rescan. The caller
(`MemoryDir`) holds the dir's lock, refuses secrets and reports the write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.base import limits
from memoryd.base.errors import Conflict, InvalidFrontmatter
from memoryd.base.files import ABSENT, Key, Staged, SymlinkRefused, key_if_present, key_of, read_capped, stage
from memoryd.store.header_cache import HeaderCache
from memoryd.store.headers import SYMLINK_REFUSAL, parse_header
from memoryd.store.index_publisher import IndexDraft, IndexPublisher
from memoryd.store.model import InvalidFile, MemoryHeader

Backup = Callable[[str, "str | None"], None]  # (filename, text before the change or None) → recorded for undo


def version_of(text: str | None) -> str:
    """A file's version: a short hash of its text ("" for no file)."""
    return "" if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Draft:
    """A write prepared before the dir's lock: the text it was built from (and that file's key)
    and the new text, staged and syncing."""

    filename: str
    prior: str | None
    key: Key | None
    new: str
    staged: Staged
    header: MemoryHeader | InvalidFile  # the new text's, parsed before the lock too
    index: IndexDraft | None = None  # MEMORY.md with this file's line moved, syncing with it

    def discard(self) -> None:
        """Drop what was staged and not published (unused or refused; safe to call either way)."""
        self.staged.discard()
        if self.index is not None:
            self.index.discard()


def _check_expected(filename: str, prior: str | None, expected: str | None) -> None:
    if expected is not None and version_of(prior) != expected:
        raise Conflict(
            f"{filename} changed since it was read "
            f"(version {version_of(prior) or 'none: it was deleted'}, expected {expected}): "
            f"read it again (GET /v1/memories/{filename}), merge your change, and save with the new version."
        )


class WritePath:
    """Writes one dir's files through its header cache and index publisher."""

    def __init__(
        self,
        path: Path,
        *,
        headers: HeaderCache,
        index: IndexPublisher,
        tmp_dir: Path,
        guard: Callable[[], None] = lambda: None,
    ) -> None:
        self.path = path
        self._guard = guard  # raises to refuse every write (the store is read-only)
        self._headers = headers
        self._index = index
        self._tmp_dir = tmp_dir

    def read_prior(self, path: Path) -> tuple[str | None, Key | None]:
        """A file's current text and key; None for a missing file. Never follows a link."""
        try:
            data, st = read_capped(path, limits.MEMORY_FILE_MAX_BYTES)
            raw, key = data, key_of(st)
        except FileNotFoundError:
            return None, None
        except SymlinkRefused:
            raise InvalidFrontmatter(f"{path.name}: {SYMLINK_REFUSAL} The link was left untouched.") from None
        except OSError as exc:  # over the cap, a FIFO, a device: never read, never replaced
            raise InvalidFrontmatter(
                f"{path.name}: {exc.strerror}. The file was left untouched: fix or move it by hand, then save again."
            ) from None
        try:
            return raw.decode("utf-8"), key
        except UnicodeDecodeError:
            raise InvalidFrontmatter(
                f"{path.name}: is not UTF-8 text. The file was left untouched: fix or delete it by "
                f"hand, then save again."
            ) from None

    def draft(self, filename: str, build: Callable[[str | None], str | None]) -> Draft | None:
        """Before the dir's lock: read the file, build its new text, stage it and start its fsync,
        so the lock is held only to check nothing moved and rename (issue 31: 20 clients queued
        behind one writer's reads, writes and fsyncs). None when there is nothing to draft; any
        refusal is left to `commit`, which decides on the file as it is then."""
        path = self.path / filename
        try:
            prior, key = self.read_prior(path)
            new = build(prior)
            if new is None or new == prior:
                return None
            staged = stage(path, new, tmp_dir=self._tmp_dir)
        except Exception:
            return None
        staged.start_sync()
        try:
            header = parse_header(filename, self.path, new, staged.stat.st_mtime).header
        except Exception:
            staged.discard()
            return None
        index = self._index.draft(changed=filename, header=header if isinstance(header, MemoryHeader) else None)
        return Draft(filename, prior, key, new, staged, header, index)

    def commit(
        self,
        filename: str,
        build: Callable[[str | None], str | None],
        *,
        expected: str | None = None,
        backup: Backup | None = None,
        draft: Draft | None = None,
    ) -> tuple[str | None, str | None, bool]:
        """The one write of every writer, under the dir's lock: refused by the guard (read-only),
        else read the file, build its new text (None: remove it), re-read when it changed
        meanwhile, back up, write atomically, patch the table and the index. Returns (text before,
        text after, whether MEMORY.md changed). `draft`: the same write prepared before the lock
        (with MEMORY.md's, see `IndexPublisher.draft`), used when the file has not moved since; its
        caller discards it after (a published draft is left alone)."""
        self._guard()
        path = self.path / filename
        self._headers.current()  # before our write changes the dir's mtime: catches other writers' files
        ready: Staged | None = None
        new: str | None
        if draft is not None and draft.filename == filename and key_if_present(path) == draft.key:
            prior, key, new, ready = draft.prior, draft.key, draft.new, draft.staged
            _check_expected(filename, prior, expected)
        else:  # no draft, or the file moved since it was drafted (its owner discards it)
            for _ in range(limits.WRITE_CHANGED_RETRIES):
                prior, key = self.read_prior(path)
                _check_expected(filename, prior, expected)
                new = build(prior)
                if key_if_present(path) == key:
                    break
            else:
                raise Conflict(
                    f"{filename} keeps changing on disk while memoryd writes it (another editor?); "
                    f"try again when it is quiet."
                )
        if new == prior:
            return prior, new, False
        if backup is not None:
            backup(filename, prior)
        # The file and MEMORY.md are staged, fsynced together, renamed, then one dir fsync;
        # the table and the index learn this one file from the text written (no re-read, no rescan).
        staged: list[Staged] = [] if new is None else [ready or stage(path, new, tmp_dir=self._tmp_dir)]
        for f in staged:
            f.start_sync()  # the disk works while the index line is placed and staged
        parsed = draft.header if draft is not None and ready is not None else None
        if new is not None and parsed is None:
            parsed = parse_header(filename, self.path, new, staged[0].stat.st_mtime).header
        with self._headers.writing(filename):  # reads listing the dir meanwhile leave this name alone
            with self._headers.lock:
                before = self._headers.table.get(filename)
                entry = None if parsed is None else (key_of(staged[0].stat), parsed)
                self._headers.table.set(filename, entry)
            if staged:
                staged[0].expect = key or ABSENT  # the file as its new text was built from
            header = entry[1] if entry is not None and isinstance(entry[1], MemoryHeader) else None
            unlink = path if new is None else None
            try:
                if self._index.should_defer():  # writers queue: the file now, its index line with theirs
                    index_changed = self._index.publish_deferred(staged, changed=filename, header=header, unlink=unlink)
                else:
                    drafted = draft.index if draft is not None and ready is not None else None
                    index = self._index.publish_with(
                        staged, changed=filename, header=header, unlink=unlink, sync_dir=True, drafted=drafted
                    )
                    if index:
                        self._index.written(*index)
                    index_changed = index is not None
            except BaseException:
                for f in staged:
                    f.discard()
                with self._headers.lock:
                    self._headers.table.set(filename, before)
                self._index.forget_layout()  # the next index update merges from the files
                raise
            self._headers.wrote(filename, entry[0] if entry is not None else None)
            self._headers.settled()
        return prior, new, index_changed

    def patch(self, filename: str, *, removed: bool) -> bool:
        """After a change outside `commit` (a link removed): the table learns this one file, the
        index is merged, no rescan."""
        with self._headers.lock:
            entry = None if removed else self._headers.stat_entry(filename)
            self._headers.table.set(filename, entry)
            self._headers.wrote(filename, entry[0] if entry is not None else None)
        header = entry[1] if entry is not None and isinstance(entry[1], MemoryHeader) else None
        changed = self._index.update(changed=filename, header=header)
        self._headers.settled()
        return changed
