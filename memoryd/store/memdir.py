"""`MemoryDir`: one project's memory directory, the only code that writes memory files.

Every write (REST save/forget, extraction, dream and its undo, the daily log) goes through one
operation: secrets refused, directory lock, then `WritePath.commit` (a re-read when the file changed
since it was read, backup when asked, atomic write, incremental index update), and one `WriteEvent` to
the listeners (metrics, watch, caches). Its parts: `HeaderCache` (the headers), `IndexPublisher`
(MEMORY.md), `WritePath` (one file's write); which file a save writes is `naming.py`, what its fields may
hold `fields.py`, reading one file `reading.py`. It does NOT know about HTTP, LLMs or sessions.
"""

from __future__ import annotations

import builtins
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from memoryd.base import limits
from memoryd.base.clock import SYSTEM_CLOCK
from memoryd.base.errors import Forbidden, InvalidFrontmatter, InvalidMemory, MemoryNotFound, ReadOnly, SecretDetected
from memoryd.base.files import (
    TEMP_DIRNAME,
    Key,
    atomic_write,
    clean_stale_temps,
    dir_lock,
    fsync_dir,
    key_if_present,
    read_capped,
)
from memoryd.base.secrets import check_no_secrets
from memoryd.store import dialect as dialects
from memoryd.store.fields import validate_fields
from memoryd.store.frontmatter import render_frontmatter
from memoryd.store.header_cache import HeaderCache
from memoryd.store.headers import (
    iso,
    meta_str,
    split_memory,
)
from memoryd.store.index import ServedIndex
from memoryd.store.index_publisher import IndexPublisher
from memoryd.store.model import InvalidFile, Memory, MemoryHeader, SaveResult
from memoryd.store.naming import target_filename
from memoryd.store.paths import check_filename, memory_path
from memoryd.store.reading import load_memory, parsed_memory
from memoryd.store.table import HeaderTable
from memoryd.store.write_path import Backup, Draft, WritePath

Now = Callable[[], datetime]  # the daemon hands its clock's `now` (memoryd/base/clock.py)
log = logging.getLogger(__name__)


def _replace_with(text: str) -> Callable[[str | None], str]:
    """A `commit` builder that writes `text` whatever the file held."""
    return lambda _prior: text


class MemoryDir:
    """The memory store of one directory: topic files plus the MEMORY.md index."""

    read_only = False  # `[memory] read_only`: recall and serve, never write (set by StoreRegistry)

    def __init__(
        self,
        path: Path,
        *,
        now: Now = SYSTEM_CLOCK.now,
        events: list[Callable[[WriteEvent], None]] | None = None,
        default_dialect: dialects.Dialect = dialects.MEMORYD,
    ) -> None:
        self.path = path
        self._dir = str(path)
        self._tmp_dir = path / TEMP_DIRNAME
        self.index_path = path / limits.INDEX_FILENAME
        self._now = now
        self._lock = dir_lock(path)
        self.default_dialect = default_dialect
        # The header table (kept current by stat) and MEMORY.md (kept in step with it) share one table.
        table = HeaderTable()
        self._index = IndexPublisher(
            path, table=table, tmp_dir=self._tmp_dir, lock=self._lock, settled=lambda: self._headers.settled()
        )
        self._headers = HeaderCache(path, table=table, on_foreign_change=self._index.forget_layout)
        self._writes = WritePath(
            path, headers=self._headers, index=self._index, tmp_dir=self._tmp_dir, guard=self.check_writable
        )
        self._temps_cleaned = False
        # Every write of this dir is reported here (the registry shares one list across dirs).
        self.events: list[Callable[[WriteEvent], None]] = events if events is not None else []
        # (dir, filename) after each write, and after each change the watcher sees on disk
        self.on_change: list[Callable[[MemoryDir, str], None]] = []

    # ------------------------------------------------------------------ reading
    def shared_header(self, filename: str, key: Key, header: MemoryHeader) -> tuple[MemoryHeader, Key]:
        """One copy of a header and its stat key for recall and the store (see `HeaderCache.shared_header`)."""
        return self._headers.shared_header(filename, key, header)

    @property
    def watched(self) -> bool:
        """Whether the watcher reports this dir's changes by name."""
        return self._headers.watched

    def set_watched(self, on: bool) -> None:
        """The watcher reports this dir's changes by name from now on (or no longer)."""
        self._headers.set_watched(on)

    def all_headers(self) -> list[MemoryHeader]:
        """Every valid memory, newest first (kept in that order: no sort per read)."""
        self._headers.fresh()
        return self._headers.table.headers()

    def scan_memory_headers(self, limit: int = limits.SCAN_MAX_FILES) -> list[MemoryHeader]:
        """The manifest scan of the seeds: at most 200 files, newest mtime first."""
        return self.all_headers()[:limit]

    def invalid_files(self) -> list[InvalidFile]:
        self._headers.fresh()
        return self._headers.table.invalid()

    def has_memories(self) -> bool:
        """Cheap gate: is there at least one topic file?"""
        try:
            with os.scandir(self.path) as it:
                return any(
                    e.name.endswith(".md") and e.name != limits.INDEX_FILENAME and not e.name.startswith(".")
                    for e in it
                )
        except FileNotFoundError:
            return False

    def list(self, type_: str | None = None) -> list[MemoryHeader]:
        if type_ is not None and type_ not in limits.MEMORY_TYPES:
            raise InvalidMemory(f"unknown memory type {type_!r}: use one of {', '.join(limits.MEMORY_TYPES)}.")
        return [h for h in self.all_headers() if type_ is None or h.type == type_]

    def dialect(self) -> dialects.Dialect:
        """The dialect a new file here gets: the one this dir's memories already use."""
        return dialects.dir_dialect(self._headers.table.dialect_counts(), self.default_dialect)

    def get(self, filename: str) -> Memory:
        return load_memory(self.path, filename)

    def read_raw(self, filename: str) -> str | None:
        """A file's exact text, or None when it does not exist (for dream backups)."""
        try:
            return read_capped(memory_path(self.path, filename), limits.MEMORY_FILE_MAX_BYTES)[0].decode("utf-8")
        except FileNotFoundError:
            return None

    def exists(self, filename: str) -> bool:
        path = memory_path(self.path, filename)
        return path.is_file() and not path.is_symlink()

    # ------------------------------------------------------------------ writing
    def _target_filename(self, name: str, type_: str, *, guess: bool = False, only_new: bool = False) -> str:
        """The file a save of (type, name) writes (`naming.target_filename`). `guess`: from the table as it
        stands (a draft's; decided again under the lock)."""
        if not guess:
            self._headers.current()
        return target_filename(self._headers.table, self.path, self.dialect(), name, type_, only_new=only_new)

    def _refuse_secrets(self, source: str, filename: str, fields: dict[str, str]) -> None:
        try:
            check_no_secrets(fields)
        except SecretDetected:
            self._emit(WriteEvent(self, filename, "secret_refused", source))
            raise

    def check_writable(self) -> None:
        if self.read_only:
            raise ReadOnly(
                "memoryd runs read-only ([memory] read_only = true): it recalls and serves, never writes; "
                "set read_only = false in config.toml and restart to change memories."
            )
        if self.path.is_symlink():  # issue 52: a linked global folder took saves wherever it pointed
            raise Forbidden(
                f"{self.path} is a symbolic link; memoryd never writes through a link. Replace it with a real "
                "directory (move what it points at there)."
            )

    def save(
        self,
        *,
        name: str,
        description: str,
        type: str,
        body: str,
        filename: str | None = None,
        source: str = "api",
        expected: str | None = None,
        backup: Backup | None = None,
        only_new: bool = False,
        applies_to: dialects.AppliesValue | None = None,
        forbid: dict[str, Any] | None = None,
        forbid_if_absent: bool = False,
    ) -> SaveResult:
        """Create or update a memory; the same type+name updates that file in place. `expected`:
        the version the caller read (409 when the file changed since); `backup` records undo;
        `only_new`: 409 instead of an update when the name is taken; `applies_to` (checked by the caller)
        replaces the file's own, None keeps it; `forbid` (checked by the caller) likewise, or with `forbid_if_absent`
        only when the file has none (a proposal never replaces what a person wrote or removed)."""
        started = time.perf_counter()
        name, description = name.strip(), " ".join(description.split())
        validate_fields(name, description, type, body)
        if filename is not None:
            check_filename(filename)
        self.check_writable()  # before the lock and the staged files, which would land through a linked dir
        fields = {"name": name, "description": description, "body": body}
        if applies_to:
            fields["applies_to"] = "\n".join(i for items in applies_to.values() for i in items)
        self._refuse_secrets(source, filename or name, fields)

        def build_for(target: str) -> Callable[[str | None], str]:
            def build(prior: str | None) -> str:
                meta: dict[str, Any] = {}
                old_body = ""
                chosen = self.dialect()
                if prior is not None:
                    try:
                        meta, old_body = split_memory(prior, source=target)
                    except InvalidFrontmatter as exc:
                        raise InvalidFrontmatter(
                            f"{exc.message} The file was left untouched: fix or delete it by hand, then save again."
                        ) from exc
                    if dialects.type_of(meta):
                        chosen = dialects.dialect_of(meta)
                new_meta = dialects.place_applies(
                    chosen,
                    dialects.render_meta(
                        chosen, meta, name=name, description=description, type_=type, stamp=iso(self._now())
                    ),
                    applies_to,
                )
                kept = forbid_if_absent and dialects.forbid_of(meta) is not None
                new_meta = dialects.place_forbid(chosen, new_meta, None if kept else forbid)
                return render_frontmatter(new_meta, dialects.keep_links(old_body, body))

            return build

        draft = None if only_new else self._draft(filename, name, type, build_for)
        try:
            with self._lock:
                self._clean_temps_once()
                target = filename or self._target_filename(name, type, only_new=only_new)
                prior, text, index_changed = self._writes.commit(
                    target, build_for(target), expected=expected, backup=backup, draft=draft
                )
                path = self.path / target
                memory = parsed_memory(self.path, target, path, text or "", path.stat().st_mtime)
        finally:
            if draft is not None:
                draft.discard()  # unused or refused (a published one is left alone)
        took_ms = (time.perf_counter() - started) * 1000
        self._emit(WriteEvent(self, target, "write", source, created=prior is None, took_ms=took_ms))
        return SaveResult(memory=memory, created=prior is None, index_changed=index_changed)

    def _draft(
        self, filename: str | None, name: str, type_: str, build_for: Callable[[str], Callable[[str | None], str]]
    ) -> Draft | None:
        """A save prepared before the lock (see `WritePath.draft`), once the dir and its staging
        subdir exist and a crash's leftovers there are cleaned."""
        if self.read_only or not self._temps_cleaned or not self._tmp_dir.is_dir():
            return None
        try:
            target = filename or self._target_filename(name, type_, guess=True)
        except Exception:  # decided again under the lock, where it is raised
            return None
        return self._writes.draft(target, build_for(target))

    def delete(
        self,
        filename: str,
        *,
        source: str = "api",
        expected: str | None = None,
        backup: Backup | None = None,
        replaced_by: str | None = None,
    ) -> None:
        """Remove a memory. `replaced_by`: the memory it was merged into; `[[links]]` to it follow."""
        path = memory_path(self.path, filename)
        missing = MemoryNotFound(
            f"no memory named {filename!r} in {self.path}; list them with GET /v1/memories or `memoryd list`."
        )
        if not os.path.lexists(path):  # checked before the lock, which would create the dir and its lock file
            raise missing
        self.check_writable()
        with self._lock:
            if path.is_symlink():
                path.unlink()  # removing a link is the fix we ask for; nothing it points at is touched
                self._writes.patch(filename, removed=True)
                fsync_dir(self.path)
            else:
                old = self._headers.header(filename)
                prior, _, _ = self._writes.commit(filename, lambda prior: None, expected=expected, backup=backup)
                if prior is None:
                    raise missing
                if replaced_by and old is not None:
                    self.relink(old, replaced_by, source=source, backup=backup)
        self._emit(WriteEvent(self, filename, "delete", source))

    def restore(self, filename: str, text: str | None, *, source: str = "undo") -> None:
        """Put a file back to an exact prior text (None: remove it). Used by dream undo;
        the text still goes through the secret check."""
        check_filename(filename)
        if text is not None:
            try:
                meta, body = split_memory(text, source=filename)
                fields = {
                    "name": meta_str(meta.get("name")),
                    "description": meta_str(meta.get("description")),
                    "body": body,
                }
            except InvalidFrontmatter:
                fields = {"body": text}
            self._refuse_secrets(source, filename, fields)
        self.check_writable()
        with self._lock:
            self._writes.commit(filename, lambda prior: text)
        self._emit(WriteEvent(self, filename, "delete" if text is None else "write", source))

    def relink(
        self, old: MemoryHeader, new_filename: str, *, source: str, backup: Backup | None = None
    ) -> builtins.list[str]:
        """`[[old]]` → `[[new]]` in every memory, for a merge or rename (the dream calls it).
        Links by name become the new name, links by file stem the new stem."""
        new_header = self._headers.header(new_filename)
        if new_header is None:
            return []
        old_stem, new_stem = old.filename[: -len(".md")], new_filename[: -len(".md")]
        new_name = new_header.name  # links by name follow the name as the file holds it
        changed: builtins.list[str] = []
        with self._lock:
            self._headers.current()
            for header in self._headers.table.headers():
                prior = self.read_raw(header.filename)
                if prior is None or "[[" not in prior:
                    continue
                text = dialects.relink(dialects.relink(prior, [old.name], new_name), [old_stem], new_stem)
                if text != prior:
                    self._writes.commit(header.filename, _replace_with(text), backup=backup)
                    changed.append(header.filename)
        for filename in changed:
            self._emit(WriteEvent(self, filename, "write", source))
        return changed

    def write_aux(
        self, relpath: str, build: Callable[[str | None], str], *, fields: dict[str, str], source: str
    ) -> Path:
        """A file beside the memories that is not one (a daily log), through the same path:
        secrets refused, lock, atomic write, event. The index is not touched."""
        rel = PurePosixPath(relpath)
        if rel.is_absolute() or ".." in rel.parts or rel.suffix != ".md" or len(rel.parts) < 2:
            raise InvalidMemory(
                f"{relpath!r} is not a path inside a subfolder of the memory dir; pass e.g. logs/2026/01/2026-01-05.md."
            )
        self._refuse_secrets(source, relpath, fields)
        path = self.path.joinpath(*rel.parts)
        with self._lock:
            prior, _ = self._writes.read_prior(path)
            atomic_write(path, build(prior))
        self._emit(WriteEvent(self, relpath, "write", source))
        return path

    # ------------------------------------------------------------------ the index
    def _clean_temps_once(self) -> None:
        if not self._temps_cleaned:  # a crash's leftovers: once per process, not on every save
            clean_stale_temps(self.path)
            self._temps_cleaned = self.path.is_dir()

    def rebuild_index(self) -> bool:
        """Reconcile MEMORY.md with the files (a full rescan); writes only when the text changes."""
        if self.read_only:
            return False
        with self._lock:
            self._clean_temps_once()
            self._headers.refresh()
            changed = self._index.update()
            if changed:
                fsync_dir(self.path)
            self._headers.settled()
            return changed

    def recover(self) -> int:
        """At start: remove a crash's temp files and reconcile the index. Returns temps removed."""
        if not self.path.is_dir():
            return 0
        with self._lock:
            removed = clean_stale_temps(self.path)
            self._temps_cleaned = True
            self.rebuild_index()
        return removed

    def served_index(self) -> ServedIndex:
        """MEMORY.md as an agent gets it: truncated at 200 lines / 25,000 bytes with the warning."""
        return self._index.served()

    # ------------------------------------------------------------------ listeners
    def changed_on_disk(self, filename: str) -> bool:
        """A change the watcher saw (listeners are told): True unless it is the echo of our own
        write, i.e. the file is as memoryd last wrote it."""
        news = self._headers.saw_change(filename, key_if_present(self.path / filename))
        self._notify(filename)
        return news

    def sync_index(self) -> bool:
        """After changes on disk: re-read only the files seen changing (a rescan only when the
        listing changed), then merge the index."""
        with self._lock:
            self._headers.current()
            if self._index.layout is not None:  # nothing changed but our own writes: the index is current
                return False
            changed = self._index.update()
            if changed:
                fsync_dir(self.path)
            self._headers.settled()
            return changed

    def _emit(self, event: WriteEvent) -> None:
        for callback in list(self.events):
            try:
                callback(event)
            except Exception:  # a listener's bug must not fail a write that already succeeded
                log.exception("write listener failed for %s", event.filename)
        if event.op != "secret_refused":
            self._notify(event.filename)

    def _notify(self, filename: str) -> None:
        for callback in list(self.on_change):
            try:
                callback(self, filename)
            except Exception:  # a listener's bug must not fail a write that already succeeded
                log.exception("memory change listener failed for %s", filename)


@dataclass(frozen=True)
class WriteEvent:
    """What the one write path reports after each operation (metrics, watch, caches listen)."""

    store: MemoryDir
    filename: str  # relative to the memory dir (a daily log: logs/YYYY/MM/YYYY-MM-DD.md)
    op: Literal["write", "delete", "secret_refused"]
    source: str  # api, extract, dream, undo, daily-log, ...
    created: bool = False  # a save that made a new file
    took_ms: float | None = None  # a save's time from its call to the file on disk (the log says it)
