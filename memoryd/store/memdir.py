"""`MemoryDir`: one project's memory directory, the only code that writes memory files.

Every write (REST save/forget, extraction, dream and its undo, the daily log) goes through one
operation, `_commit`: secrets refused, directory lock, a re-read when the file changed since it
was read, backup when asked, atomic write, incremental index update, one `WriteEvent` to the
listeners (metrics, watch, caches). It does NOT know about HTTP, LLMs or sessions.
"""

from __future__ import annotations

import builtins
import hashlib
import logging
import os
import stat
import time
from datetime import datetime
from pathlib import Path, PurePosixPath
from dataclasses import dataclass
from typing import Any, Callable, Literal

from memoryd import limits
from memoryd.clock import SYSTEM_CLOCK
from memoryd.errors import Conflict, InvalidFrontmatter, InvalidMemory, MemoryNotFound, ReadOnly, SecretDetected
from memoryd.store import dialect as dialects
from memoryd.base.files import ABSENT, TEMP_DIRNAME, Key, Staged, SymlinkRefused, TargetMoved, atomic_write, clean_stale_temps, dir_lock, fsync_dir, key_now, open_nofollow, publish, read_text_nofollow, stage
from memoryd.store.frontmatter import render_frontmatter, split_frontmatter
from memoryd.store.headers import SYMLINK_REFUSAL, body_of, iso, meta_str, parse_header, read_text, split_memory
from memoryd.store.index import IndexLayout, ServedIndex, merge_index, truncate_index
from memoryd.store.model import InvalidFile, Memory, MemoryHeader, SaveResult
from memoryd.store.paths import check_filename, memory_path
from memoryd.base.secrets import check_no_secrets
from memoryd.store.table import HeaderTable

Now = Callable[[], datetime]  # the daemon hands its clock's `now` (memoryd/clock.py)
Backup = Callable[[str, "str | None"], None]  # (filename, text before the change or None) → recorded for undo
log = logging.getLogger(__name__)
INDEX_BACKUP_FILENAME = limits.INDEX_FILENAME + ".before-memoryd"  # the index as found, before memoryd's first rewrite


def version_of(text: str | None) -> str:
    """A file's version: a short hash of its text ("" for no file)."""
    return "" if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def validate_fields(name: str, description: str, type_: str, body: str) -> None:
    """Refuse unknown types and empty or oversized fields, naming the limit."""
    if type_ not in limits.MEMORY_TYPES:
        raise InvalidMemory(f"unknown memory type {type_!r}: use one of {', '.join(limits.MEMORY_TYPES)}.")
    if not name.strip():
        raise InvalidMemory("name is empty: give the memory a short title, e.g. 'Testing preferences'.")
    if len(name) > limits.MEMORY_NAME_MAX_CHARS:
        raise InvalidMemory(f"name is {len(name)} chars, over {limits.MEMORY_NAME_MAX_CHARS}: shorten the title and put detail in the body.")
    if "\n" in name.strip():
        raise InvalidMemory("name spans several lines: use a one-line title.")
    if not description.strip():
        raise InvalidMemory("description is empty: add one specific line; recall decides relevance from it.")
    if len(description) > limits.MEMORY_DESCRIPTION_MAX_CHARS:
        raise InvalidMemory(
            f"description is {len(description)} chars, over {limits.MEMORY_DESCRIPTION_MAX_CHARS}: keep it to one line and move detail into the body."
        )
    size = len(body.encode("utf-8"))
    if size > limits.MEMORY_BODY_MAX_BYTES:
        raise InvalidMemory(f"body is {size:,} bytes, over {limits.MEMORY_BODY_MAX_BYTES:,}: split it into several focused memories.")


def _replace_with(text: str) -> Callable[[str | None], str]:
    """A `_commit` builder that writes `text` whatever the file held."""
    return lambda _prior: text


def _key(st: os.stat_result) -> Key:
    return (st.st_mtime_ns, st.st_size)


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
        # The header table. Reads re-stat every file; writes update only the file they wrote (no
        # rescan), plus files the watcher saw change.
        self._table = HeaderTable()
        self._table_lock = self._table.lock
        self._loaded = False
        self._dir_key: int | None = None  # the dir's mtime_ns after our last write or sweep: another writer changes it
        self._dirty: set[str] = set()
        self._written: dict[str, Key | None] = {}  # each file's key after our last write (to tell the watcher's echoes)
        # MEMORY.md as memoryd last wrote it (its key and layout), and the pointer lines it wrote.
        self._index_key: Key | None = None
        self._layout: IndexLayout | None = None
        self._ours: dict[str, str] = {}
        self._temps_cleaned = False
        self.watched = False  # set by MemoryWatcher: changes on disk are reported by name
        self._swept_at = 0.0  # monotonic time of the last stat of every file
        # Every write of this dir is reported here (the registry shares one list across dirs).
        self.events: list[Callable[[WriteEvent], None]] = events if events is not None else []
        # (dir, filename) after each write, and after each change the watcher sees on disk
        self.on_change: list[Callable[[MemoryDir, str], None]] = []

    # ------------------------------------------------------------------ reading
    def _read_entry(self, filename: str) -> tuple[Key, MemoryHeader | InvalidFile] | None:
        """One file read (never through a link); the key is that of the text read; None: gone."""
        try:
            text, st = read_text(os.path.join(self._dir, filename))
        except (FileNotFoundError, NotADirectoryError):
            return None
        key = _key(st) if st is not None else (0, -1)
        if isinstance(text, InvalidFile):
            return key, text
        assert st is not None
        return key, parse_header(filename, self.path, text, st.st_mtime).header

    def shared_header(self, filename: str, key: Key, header: MemoryHeader) -> MemoryHeader:
        """One copy of a header in memory for recall and the store (20,000 headers are ~15 MB): the
        table's own when it holds this version of the file, else `header`, recorded as that version."""
        with self._table_lock:
            cached = self._table.get(filename)
            if cached is not None and cached[0] == key and isinstance(cached[1], MemoryHeader):
                return cached[1]
            if cached is None or cached[0] != key:
                self._table.set(filename, (key, header))
                self._layout = None  # the table moved without a write of ours: the next index update merges from scratch
            return header

    def _stat_entry(self, filename: str) -> tuple[Key, MemoryHeader | InvalidFile] | None:
        """One file's table entry from an lstat, re-read only when its key changed."""
        try:
            st = os.lstat(os.path.join(self._dir, filename))
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            return (_key(st), InvalidFile(filename, SYMLINK_REFUSAL))
        if not stat.S_ISREG(st.st_mode):
            return None
        cached = self._table.get(filename)
        if cached is not None and cached[0] == _key(st):
            return cached
        return self._read_entry(filename)

    def _refresh(self) -> None:
        """Stat every `.md` file; re-read only the ones whose mtime or size changed."""
        self._dir_key = self._dir_mtime()  # before the listing: a later change bumps it
        try:
            with os.scandir(self.path) as it:
                entries = [(e.name, e.is_file(follow_symlinks=False)) for e in it]
        except (FileNotFoundError, NotADirectoryError):
            entries = []
        with self._table_lock:
            seen: set[str] = set()
            changed = False
            for name, regular in entries:
                if not name.endswith(".md") or name == limits.INDEX_FILENAME or name.startswith("."):
                    continue
                # A file first seen is read at once (the read's fstat gives its key); a known one
                # is re-read only when its lstat key changed.
                entry = self._read_entry(name) if regular and name not in self._table else self._stat_entry(name)
                if entry is not None:
                    seen.add(name)
                    if entry is not self._table.get(name):
                        self._table.set(name, entry)
                        changed = True
            for gone in [item.filename for item in self._table.items() if item.filename not in seen]:
                self._table.set(gone, None)
                changed = True
            self._dirty.clear()
            self._loaded = True
            self._swept_at = time.monotonic()
            if changed:
                self._layout = None  # someone else's changes: the next index update merges from scratch

    def _current_table(self) -> None:
        """Bring the table a write works on up to date: loaded once, then patched, rescanned only
        when another writer changed the directory listing (its mtime) since our last write."""
        if not self._loaded or self._dir_key is None or self._dir_mtime() != self._dir_key:
            self._refresh()
            return
        with self._table_lock:
            for name in list(self._dirty):
                entry = self._stat_entry(name)
                if entry is not self._table.get(name):  # not the echo of our own write
                    self._table.set(name, entry)
                    self._layout = None
            self._dirty.clear()

    def _dir_mtime(self) -> int | None:
        try:
            return os.stat(self.path).st_mtime_ns
        except OSError:
            return None

    def _fresh(self) -> None:
        """Bring the table up to date for a read. A small dir: stat every file (a hand edit in
        place changes no dir mtime). A big one (a stat of 20,000 files costs ~60 ms): the files
        the watcher named and a changed listing (the dir's mtime), with a full sweep at most once
        a second (unwatched) or a minute (watched: events name what changed), as recall does."""
        every = limits.STORE_WATCHED_SWEEP_SECONDS if self.watched else limits.RECALL_WATCHED_SWEEP_SECONDS
        trust = self._loaded and len(self._table) >= limits.STORE_WATCHED_TRUST_MIN_FILES and time.monotonic() - self._swept_at < every
        if trust:
            self._current_table()
        else:
            self._refresh()

    def set_watched(self, on: bool) -> None:
        """The watcher reports this dir's changes by name from now on (or no longer); the next
        read sweeps every file once, for what changed before."""
        self.watched, self._swept_at = on, 0.0

    def all_headers(self) -> list[MemoryHeader]:
        """Every valid memory, newest first (kept in that order: no sort per read)."""
        self._fresh()
        return self._table.headers()

    def scan_memory_headers(self, limit: int = limits.SCAN_MAX_FILES) -> list[MemoryHeader]:
        """The manifest scan of the seeds: at most 200 files, newest mtime first."""
        return self.all_headers()[:limit]

    def invalid_files(self) -> list[InvalidFile]:
        self._fresh()
        return self._table.invalid()

    def has_memories(self) -> bool:
        """Cheap gate: is there at least one topic file?"""
        try:
            with os.scandir(self.path) as it:
                return any(e.name.endswith(".md") and e.name != limits.INDEX_FILENAME and not e.name.startswith(".") for e in it)
        except FileNotFoundError:
            return False

    def list(self, type_: str | None = None) -> list[MemoryHeader]:
        if type_ is not None and type_ not in limits.MEMORY_TYPES:
            raise InvalidMemory(f"unknown memory type {type_!r}: use one of {', '.join(limits.MEMORY_TYPES)}.")
        return [h for h in self.all_headers() if type_ is None or h.type == type_]

    def dialect(self) -> dialects.Dialect:
        """The dialect a new file here gets: the one this dir's memories already use."""
        return dialects.dir_dialect(self._table.dialect_counts(), self.default_dialect)

    def get(self, filename: str) -> Memory:
        path = memory_path(self.path, filename)
        try:
            text = read_text_nofollow(path)
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            raise MemoryNotFound(f"no memory named {filename!r} in {self.path}; list them with GET /v1/memories or `memoryd list`.") from None
        except SymlinkRefused:
            raise InvalidFrontmatter(f"{filename}: {SYMLINK_REFUSAL}") from None
        except UnicodeDecodeError:
            raise InvalidFrontmatter(f"{filename}: is not UTF-8 text (a binary file?); convert it or move it out of the memory dir.") from None
        except OSError as exc:
            raise InvalidFrontmatter(f"{filename}: unreadable ({exc.__class__.__name__}); check its permissions and that it is UTF-8.") from exc
        return self._memory(filename, path, text, mtime)

    def _memory(self, filename: str, path: Path, text: str, mtime: float) -> Memory:
        header, meta, body_line = parse_header(filename, self.path, text, mtime)
        if isinstance(header, InvalidFile):
            split_frontmatter(text, source=filename)  # YAML's own complaint first, when it has one
            raise InvalidFrontmatter(f"{filename}: {header.error}")
        body = body_of(text, body_line, source=filename)
        return Memory(
            filename=filename,
            name=header.name,
            description=header.description,
            type=header.type,
            body=body.rstrip("\n"),
            mtime=mtime,
            created=meta_str(meta.get("created")),
            modified=meta_str(meta.get("modified")),
            path=path,
            version=version_of(text),
            dialect=header.dialect,
        )

    def read_raw(self, filename: str) -> str | None:
        """A file's exact text, or None when it does not exist (for dream backups)."""
        try:
            return read_text_nofollow(memory_path(self.path, filename))
        except FileNotFoundError:
            return None

    def exists(self, filename: str) -> bool:
        path = memory_path(self.path, filename)
        return path.is_file() and not path.is_symlink()

    # ------------------------------------------------------------------ writing
    def _target_filename(self, name: str, type_: str) -> str:
        """The file a save of (type, name) writes: an existing memory with that type and name
        (in either dialect), else a new name in the dir's dialect, suffixed when taken."""
        self._current_table()
        found = self._table.find(type_, name)
        if found is not None:
            return found
        base = dialects.new_stem(self.dialect(), type_, name)
        entry = self._table.get(f"{base}.md")
        if entry is not None and isinstance(entry[1], InvalidFile):
            # A hand-written file that does not parse may be this very memory: never fork or overwrite it.
            raise InvalidFrontmatter(
                f"{entry[1].filename}: {entry[1].error} The file was left untouched: fix or delete it by hand, then save again."
            )
        candidate, n = f"{base}.md", 2
        while os.path.lexists(self.path / candidate):
            candidate, n = f"{base}-{n}.md", n + 1
        return candidate

    def _read_prior(self, path: Path) -> tuple[str | None, Key | None]:
        """A file's current text and key; None for a missing file. Never follows a link."""
        try:
            with open_nofollow(path) as fh:
                key = _key(os.fstat(fh.fileno()))
                raw = fh.read()
        except FileNotFoundError:
            return None, None
        except SymlinkRefused:
            raise InvalidFrontmatter(f"{path.name}: {SYMLINK_REFUSAL} The link was left untouched.") from None
        try:
            return raw.decode("utf-8"), key
        except UnicodeDecodeError:
            raise InvalidFrontmatter(f"{path.name}: is not UTF-8 text. The file was left untouched: fix or delete it by hand, then save again.") from None

    def _key_now(self, path: Path) -> Key | None:
        key = key_now(path)
        return None if key == ABSENT else key

    def _refuse_secrets(self, source: str, filename: str, fields: dict[str, str]) -> None:
        try:
            check_no_secrets(fields)
        except SecretDetected:
            self._emit(WriteEvent(self, filename, "secret_refused", source))
            raise

    def check_writable(self) -> None:
        if self.read_only:
            raise ReadOnly("memoryd runs read-only ([memory] read_only = true): it recalls and serves, never writes; "
                           "set read_only = false in config.toml and restart to change memories.")

    def _commit(
        self,
        filename: str,
        build: Callable[[str | None], str | None],
        *,
        source: str,
        expected: str | None = None,
        backup: Backup | None = None,
    ) -> tuple[str | None, str | None, bool]:
        """The one write path, called under the lock: read the file, build its new text (None:
        remove it), re-read when it changed meanwhile, back up, write atomically, patch the
        table and the index. Returns (text before, text after, whether MEMORY.md changed)."""
        self.check_writable()
        path = self.path / filename
        self._current_table()  # before our write changes the dir's mtime: catches other writers' files
        for _ in range(limits.WRITE_CHANGED_RETRIES):
            prior, key = self._read_prior(path)
            if expected is not None and version_of(prior) != expected:
                raise Conflict(
                    f"{filename} changed since it was read (version {version_of(prior) or 'none: it was deleted'}, expected {expected}): "
                    f"read it again (GET /v1/memories/{filename}), merge your change, and save with the new version."
                )
            new = build(prior)
            if self._key_now(path) == key:
                break
        else:
            raise Conflict(f"{filename} keeps changing on disk while memoryd writes it (another editor?); try again when it is quiet.")
        if new == prior:
            return prior, new, False
        if backup is not None:
            backup(filename, prior)
        # The file and MEMORY.md are staged, fsynced together, renamed, then one dir fsync;
        # the table and the index learn this one file from the text written (no re-read, no rescan).
        staged: list[Staged] = [] if new is None else [stage(path, new, tmp_dir=self._tmp_dir)]
        for f in staged:
            f.start_sync()  # the disk works while the index line is placed and staged
        with self._table_lock:
            before = self._table.get(filename)
            entry = None if new is None else (_key(staged[0].stat), parse_header(filename, self.path, new, staged[0].stat.st_mtime).header)
            self._table.set(filename, entry)
        if staged:
            staged[0].expect = key or ABSENT  # the file as its new text was built from
        try:
            index = self._publish_with_index(staged, changed=filename, header=entry[1] if entry is not None and isinstance(entry[1], MemoryHeader) else None,
                                             unlink=path if new is None else None, sync_dir=True)
        except BaseException:
            for f in staged:
                f.discard()
            with self._table_lock:
                self._table.set(filename, before)
            self._layout = None  # the next index update merges from the files
            raise
        self._written[filename] = entry[0] if entry is not None else None
        if index:
            self._index_written(*index)
        self._dir_key = self._dir_mtime()
        return prior, new, index is not None

    def _patch(self, filename: str, *, removed: bool) -> bool:
        """After a change outside `_commit` (a link removed): the table learns this one file, the
        index is merged, no rescan."""
        with self._table_lock:
            entry = None if removed else self._stat_entry(filename)
            self._table.set(filename, entry)
            self._written[filename] = entry[0] if entry is not None else None
        header = entry[1] if entry is not None and isinstance(entry[1], MemoryHeader) else None
        changed = self._update_index(changed=filename, header=header)
        self._dir_key = self._dir_mtime()
        return changed

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
    ) -> SaveResult:
        """Create or update a memory; the same type+name updates that file in place. `expected`:
        the version the caller read (409 when the file changed since); `backup` records undo."""
        name, description = name.strip(), " ".join(description.split())
        validate_fields(name, description, type, body)
        if filename is not None:
            check_filename(filename)
        self._refuse_secrets(source, filename or name, {"name": name, "description": description, "body": body})
        with self._lock:
            self._clean_temps_once()
            target = filename or self._target_filename(name, type)

            def build(prior: str | None) -> str:
                meta: dict[str, Any] = {}
                old_body = ""
                chosen = self.dialect()
                if prior is not None:
                    try:
                        meta, old_body = split_memory(prior, source=target)
                    except InvalidFrontmatter as exc:
                        raise InvalidFrontmatter(f"{exc.message} The file was left untouched: fix or delete it by hand, then save again.") from exc
                    if dialects.type_of(meta):
                        chosen = dialects.dialect_of(meta)
                new_meta = dialects.render_meta(chosen, meta, name=name, description=description, type_=type, stamp=iso(self._now()))
                return render_frontmatter(new_meta, dialects.keep_links(old_body, body))

            prior, text, index_changed = self._commit(target, build, source=source, expected=expected, backup=backup)
            path = self.path / target
            memory = self._memory(target, path, text or "", path.stat().st_mtime)
        self._emit(WriteEvent(self, target, "write", source))
        return SaveResult(memory=memory, created=prior is None, index_changed=index_changed)

    def delete(self, filename: str, *, source: str = "api", expected: str | None = None, backup: Backup | None = None, replaced_by: str | None = None) -> None:
        """Remove a memory. `replaced_by`: the memory it was merged into; `[[links]]` to it follow."""
        path = memory_path(self.path, filename)
        missing = MemoryNotFound(f"no memory named {filename!r} in {self.path}; list them with GET /v1/memories or `memoryd list`.")
        if not os.path.lexists(path):  # checked before the lock, which would create the dir and its lock file
            raise missing
        self.check_writable()
        with self._lock:
            if path.is_symlink():
                path.unlink()  # removing a link is the fix we ask for; nothing it points at is touched
                self._patch(filename, removed=True)
                fsync_dir(self.path)
            else:
                old = self._table_header(filename)
                prior, _, _ = self._commit(filename, lambda prior: None, source=source, expected=expected, backup=backup)
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
                fields = {"name": meta_str(meta.get("name")), "description": meta_str(meta.get("description")), "body": body}
            except InvalidFrontmatter:
                fields = {"body": text}
            self._refuse_secrets(source, filename, fields)
        with self._lock:
            self._commit(filename, lambda prior: text, source=source)
        self._emit(WriteEvent(self, filename, "delete" if text is None else "write", source))

    def relink(self, old: MemoryHeader, new_filename: str, *, source: str, backup: Backup | None = None) -> builtins.list[str]:
        """`[[old]]` → `[[new]]` in every memory, for a merge or rename (the dream calls it).
        Links by name become the new name, links by file stem the new stem."""
        new_header = self._table_header(new_filename)
        if new_header is None:
            return []
        old_stem, new_stem = old.filename[: -len(".md")], new_filename[: -len(".md")]
        new_name = dialects.stored_name(dialects.CLAUDE_CODE, new_header.name) if new_header.dialect == dialects.CLAUDE_CODE else new_header.name
        changed: builtins.list[str] = []
        with self._lock:
            self._current_table()
            for header in self._table.headers():
                prior = self.read_raw(header.filename)
                if prior is None or "[[" not in prior:
                    continue
                text = dialects.relink(dialects.relink(prior, [old.name], new_name), [old_stem], new_stem)
                if text != prior:
                    self._commit(header.filename, _replace_with(text), source=source, backup=backup)
                    changed.append(header.filename)
        for filename in changed:
            self._emit(WriteEvent(self, filename, "write", source))
        return changed

    def write_aux(self, relpath: str, build: Callable[[str | None], str], *, fields: dict[str, str], source: str) -> Path:
        """A file beside the memories that is not one (a daily log), through the same path:
        secrets refused, lock, atomic write, event. The index is not touched."""
        rel = PurePosixPath(relpath)
        if rel.is_absolute() or ".." in rel.parts or rel.suffix != ".md" or len(rel.parts) < 2:
            raise InvalidMemory(f"{relpath!r} is not a path inside a subfolder of the memory dir; pass e.g. logs/2026/01/2026-01-05.md.")
        self._refuse_secrets(source, relpath, fields)
        path = self.path.joinpath(*rel.parts)
        with self._lock:
            prior, _ = self._read_prior(path)
            atomic_write(path, build(prior))
        self._emit(WriteEvent(self, relpath, "write", source))
        return path

    def _table_header(self, filename: str) -> MemoryHeader | None:
        entry = self._table.get(filename)
        if entry is None:
            entry = self._stat_entry(filename)
        return entry[1] if entry is not None and isinstance(entry[1], MemoryHeader) else None

    # ------------------------------------------------------------------ the index
    def _clean_temps_once(self) -> None:
        if not self._temps_cleaned:  # a crash's leftovers: once per process, not on every save
            clean_stale_temps(self.path)
            self._temps_cleaned = self.path.is_dir()

    def _read_index(self) -> builtins.list[str] | None:
        """MEMORY.md's lines; None when it is a link or not text (never rewritten)."""
        try:
            text = read_text_nofollow(self.index_path)
        except FileNotFoundError:
            return []
        except SymlinkRefused:
            log.warning("%s is a symbolic link; the index was not rewritten (replace the link with a file)", self.index_path)
            return None
        except (UnicodeDecodeError, IsADirectoryError):
            log.warning("%s is not a UTF-8 regular file; the index was not rewritten", self.index_path)
            return None
        return text.rstrip("\n").split("\n") if text.strip() else []

    def _update_index(self, *, changed: str | None = None, header: MemoryHeader | None = None) -> bool:
        """Bring MEMORY.md up to date (renamed into place; the caller fsyncs the dir)."""
        index = self._publish_with_index([], changed=changed, header=header, sync_dir=False)
        if index is None:
            return False
        self._index_written(*index)
        return True

    def _publish_with_index(self, staged: builtins.list[Staged], *, changed: str | None, header: MemoryHeader | None,
                            unlink: Path | None = None, sync_dir: bool) -> tuple[Staged, IndexLayout] | None:
        """Publish `staged` with MEMORY.md's new text; when someone else (an agent, an editor)
        writes MEMORY.md meanwhile, merge again from what they wrote instead of overwriting it."""
        for _ in range(limits.WRITE_CHANGED_RETRIES):
            index = self._stage_index(changed=changed, header=header)
            try:
                if staged or index or unlink:
                    publish(staged + ([index[0]] if index else []), unlink=unlink, sync_dir=sync_dir)
                return index
            except TargetMoved as moved:
                if index:
                    index[0].discard()
                self._layout = None  # the next merge starts from the index as it is now
                if moved.path != self.index_path:
                    raise Conflict(f"{moved.path.name} changed on disk while memoryd wrote it (another editor?); nothing was written: try again.") from None
        raise Conflict(f"{limits.INDEX_FILENAME} keeps changing on disk while memoryd updates it (another editor?); try again when it is quiet.")

    def _stage_index(self, *, changed: str | None = None, header: MemoryHeader | None = None) -> tuple[Staged, IndexLayout] | None:
        """MEMORY.md's new text staged, keeping every line memoryd did not write; None when it
        does not change. After a write of one file to an index memoryd wrote last, that file's
        line moves alone (no rescan, no re-read)."""
        layout = self._layout
        if layout is not None and changed is not None and self._index_key is not None and self._key_now(self.index_path) == self._index_key:
            moved = layout.upsert(header) if header is not None else layout.drop(changed)
            if not moved:
                return None
            return self._stage_layout(layout, self._index_key), layout
        read_key = key_now(self.index_path)  # before the read (ABSENT: none yet): a write in between is caught at publish
        current = self._read_index()
        if current is None:
            return None
        removed = frozenset({changed}) if changed is not None and header is None else frozenset()
        layout = merge_index(current, self._table.headers(), self._ours, removed=removed)
        mine = set(self._ours.values()) | set(layout.ours().values())
        self._ours, self._layout = layout.ours(), layout
        lines = layout.lines()
        if lines == current:
            self._index_key = self._key_now(self.index_path)
            return None
        foreign = [line for line in current if line.strip() and line not in mine]
        backup = self.path / INDEX_BACKUP_FILENAME
        if foreign and not os.path.lexists(backup):  # the first rewrite of an index someone else wrote
            atomic_write(backup, "\n".join(current) + "\n")
        return self._stage_layout(layout, read_key), layout

    def _stage_layout(self, layout: IndexLayout, built_from: Key) -> Staged:
        lines = layout.lines()
        staged = stage(self.index_path, "\n".join(lines) + "\n" if lines else "", tmp_dir=self._tmp_dir)
        staged.expect = built_from
        return staged

    def _index_written(self, staged: Staged, layout: IndexLayout) -> None:
        self._index_key, self._ours = _key(staged.stat), layout.ours()

    def rebuild_index(self) -> bool:
        """Reconcile MEMORY.md with the files (a full rescan); writes only when the text changes."""
        if self.read_only:
            return False
        with self._lock:
            self._clean_temps_once()
            self._refresh()
            changed = self._update_index()
            if changed:
                fsync_dir(self.path)
            self._dir_key = self._dir_mtime()
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
        try:
            raw = read_text_nofollow(self.index_path)
        except FileNotFoundError:
            raw = ""
        except (SymlinkRefused, UnicodeDecodeError, IsADirectoryError):
            log.warning("%s is not a readable regular file; serving an empty index", self.index_path)
            raw = ""
        return truncate_index(raw)

    # ------------------------------------------------------------------ listeners
    def changed_on_disk(self, filename: str) -> bool:
        """A change the watcher saw (listeners are told): True unless it is the echo of our own
        write, i.e. the file is as memoryd last wrote it."""
        now = self._key_now(self.path / filename)
        echo = filename in self._written and self._written[filename] == now
        if not echo:
            with self._table_lock:
                self._dirty.add(filename)
        self._notify(filename)
        return not echo

    def sync_index(self) -> bool:
        """After changes on disk: re-read only the files seen changing (a rescan only when the
        listing changed), then merge the index."""
        with self._lock:
            self._current_table()
            if self._layout is not None:  # nothing changed but our own writes: the index is current
                return False
            changed = self._update_index()
            if changed:
                fsync_dir(self.path)
            self._dir_key = self._dir_mtime()
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
