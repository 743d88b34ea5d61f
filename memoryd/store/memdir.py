"""`MemoryDir`: one project's memory directory, the only code that writes memory files.

Every write (REST, extraction, dream, undo) goes through `save`, `delete` or `restore`:
fields validated, secrets refused, atomic write under the directory lock, index rebuilt.
It does NOT know about HTTP, LLMs or sessions.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from memoryd import limits
from memoryd.errors import InvalidFrontmatter, InvalidMemory, MemoryNotFound, ReadOnly
from memoryd.store.files import SymlinkRefused, atomic_write, clean_stale_temps, dir_lock, read_text_nofollow
from memoryd.store.frontmatter import read_header_meta, render_frontmatter, split_frontmatter
from memoryd.store.index import ServedIndex, render_index, truncate_index
from memoryd.store.model import InvalidFile, Memory, MemoryHeader, SaveResult
from memoryd.store.paths import FILENAME_RE, check_filename, memory_path, slugify
from memoryd.store.secrets import check_no_secrets

Clock = Callable[[], datetime]
log = logging.getLogger(__name__)
SYMLINK_REFUSAL = "is a symbolic link; memoryd never follows links (it could point at a secret outside the memory dir): replace it with a real file."


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return iso(value)
    return str(value)


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


class MemoryDir:
    """The memory store of one directory: topic files plus the MEMORY.md index."""

    read_only = False  # `[memory] read_only`: recall and serve, never write (set by StoreRegistry)

    def __init__(self, path: Path, *, now: Clock = utc_now) -> None:
        self.path = path
        self.index_path = path / limits.INDEX_FILENAME
        self._now = now
        self._lock = dir_lock(path)
        # filename → ((mtime_ns, size), header or InvalidFile); refreshed by stat on every scan.
        self._cache: dict[str, tuple[tuple[int, int], MemoryHeader | InvalidFile]] = {}
        self._cache_lock = threading.Lock()
        self._temps_cleaned = False
        # (dir, filename) after each write, and after each change the watcher sees on disk
        self.on_change: list[Callable[[MemoryDir, str], None]] = []

    # ------------------------------------------------------------------ reading
    def _header_of(self, path: Path, mtime: float) -> MemoryHeader | InvalidFile:
        filename = path.name
        if not FILENAME_RE.match(filename):
            return InvalidFile(filename, f"not named <type>_<slug>.md; rename it (e.g. user_{slugify(path.stem)}.md) to make it a memory.")
        try:
            meta = read_header_meta(path)
        except InvalidFrontmatter as exc:
            return InvalidFile(filename, exc.message)
        except (OSError, UnicodeDecodeError) as exc:
            return InvalidFile(filename, f"unreadable ({exc.__class__.__name__}); check its permissions and encoding.")
        type_ = _str(meta.get("type")) or filename.split("_", 1)[0]
        if type_ not in limits.MEMORY_TYPES:
            return InvalidFile(filename, f"type {type_!r} is not one of {', '.join(limits.MEMORY_TYPES)}; fix the 'type:' line.")
        name = _str(meta.get("name")) or path.stem.split("_", 1)[-1].replace("-", " ")
        return MemoryHeader(filename, name, _str(meta.get("description")), type_, mtime, path)

    def _refresh(self) -> list[MemoryHeader | InvalidFile]:
        """Stat every `.md` file; re-read only the ones whose mtime or size changed."""
        seen: dict[str, tuple[tuple[int, int], MemoryHeader | InvalidFile]] = {}
        try:
            entries = list(os.scandir(self.path))
        except FileNotFoundError:
            entries = []
        with self._cache_lock:
            for entry in entries:
                name = entry.name
                if not name.endswith(".md") or name == limits.INDEX_FILENAME or name.startswith("."):
                    continue
                try:
                    st = entry.stat()
                except FileNotFoundError:
                    continue
                if entry.is_symlink():
                    seen[name] = ((st.st_mtime_ns, st.st_size), InvalidFile(name, SYMLINK_REFUSAL))
                    continue
                if not entry.is_file():
                    continue
                key = (st.st_mtime_ns, st.st_size)
                cached = self._cache.get(name)
                if cached is not None and cached[0] == key:
                    seen[name] = cached
                else:
                    seen[name] = (key, self._header_of(Path(entry.path), st.st_mtime))
            self._cache = seen
            return [item for _, item in seen.values()]

    def all_headers(self) -> list[MemoryHeader]:
        """Every valid memory, newest first."""
        headers = [h for h in self._refresh() if isinstance(h, MemoryHeader)]
        headers.sort(key=lambda h: (-h.mtime, h.filename))
        return headers

    def scan_memory_headers(self, limit: int = limits.SCAN_MAX_FILES) -> list[MemoryHeader]:
        """The manifest scan of the seeds: at most 200 files, newest mtime first."""
        return self.all_headers()[:limit]

    def invalid_files(self) -> list[InvalidFile]:
        return sorted((h for h in self._refresh() if isinstance(h, InvalidFile)), key=lambda f: f.filename)

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

    def get(self, filename: str) -> Memory:
        path = memory_path(self.path, filename)
        try:
            text = read_text_nofollow(path)
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            raise MemoryNotFound(f"no memory named {filename!r} in {self.path}; list them with GET /v1/memories or `memoryd list`.") from None
        except SymlinkRefused:
            raise InvalidFrontmatter(f"{filename}: {SYMLINK_REFUSAL}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidFrontmatter(f"{filename}: unreadable ({exc.__class__.__name__}); check its permissions and that it is UTF-8.") from exc
        meta, body = split_frontmatter(text, source=filename)
        header = self._header_of(path, mtime)
        if isinstance(header, InvalidFile):
            raise InvalidFrontmatter(f"{filename}: {header.error}")
        return Memory(
            filename=filename,
            name=header.name,
            description=header.description,
            type=header.type,
            body=body.rstrip("\n"),
            mtime=mtime,
            created=_str(meta.get("created")),
            modified=_str(meta.get("modified")),
            path=path,
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
        """The file a save of (type, name) writes: an existing memory with that type and name,
        else `<type>_<slug>.md`, suffixed when another memory already owns that slug."""
        wanted = name.strip().casefold()
        base = f"{type_}_{slugify(name)}"
        for item in self._refresh():
            if isinstance(item, MemoryHeader) and item.type == type_ and item.name.strip().casefold() == wanted:
                return item.filename
            if isinstance(item, InvalidFile) and item.filename == f"{base}.md":
                # A hand-written file that does not parse may be this very memory: never fork or overwrite it.
                raise InvalidFrontmatter(
                    f"{item.filename}: {item.error} The file was left untouched: fix or delete it by hand, then save again."
                )
        candidate, n = f"{base}.md", 2
        while (self.path / candidate).exists():
            candidate, n = f"{base}-{n}.md", n + 1
        return candidate

    def check_writable(self) -> None:
        if self.read_only:
            raise ReadOnly("memoryd runs read-only ([memory] read_only = true): it recalls and serves, never writes; "
                           "set read_only = false in config.toml and restart to change memories.")

    def save(self, *, name: str, description: str, type: str, body: str, filename: str | None = None) -> SaveResult:
        """Create or update a memory; the same type+name updates that file in place."""
        self.check_writable()
        name, description = name.strip(), " ".join(description.split())
        validate_fields(name, description, type, body)
        check_no_secrets({"name": name, "description": description, "body": body})
        with self._lock:
            target = check_filename(filename) if filename else self._target_filename(name, type)
            path = memory_path(self.path, target)
            meta: dict[str, Any] = {}
            created = True
            if path.is_symlink():
                raise InvalidFrontmatter(f"{target}: {SYMLINK_REFUSAL} The link was left untouched.")
            if path.exists():
                try:
                    meta, _ = split_frontmatter(read_text_nofollow(path), source=target)
                except InvalidFrontmatter as exc:
                    raise InvalidFrontmatter(f"{exc.message} The file was left untouched: fix or delete it by hand, then save again.") from exc
                created = False
            stamp = iso(self._now())
            extra = {k: v for k, v in meta.items() if k not in {"name", "description", "type", "created", "modified"}}
            new_meta: dict[str, Any] = {
                "name": name,
                "description": description,
                "type": type,
                "created": _str(meta.get("created")) or stamp,
                "modified": stamp,
                **extra,
            }
            atomic_write(path, render_frontmatter(new_meta, body))
            index_changed = self.rebuild_index()
            memory = self.get(target)
        self._notify(target)
        return SaveResult(memory=memory, created=created, index_changed=index_changed)

    def delete(self, filename: str) -> None:
        self.check_writable()
        path = memory_path(self.path, filename)
        with self._lock:
            try:
                path.unlink()
            except FileNotFoundError:
                raise MemoryNotFound(f"no memory named {filename!r} in {self.path}; list them with GET /v1/memories or `memoryd list`.") from None
            self.rebuild_index()
        self._notify(filename)

    def restore(self, filename: str, text: str | None) -> None:
        """Put a file back to an exact prior text (None: remove it). Used by dream undo;
        the text still goes through the secret check."""
        self.check_writable()
        path = memory_path(self.path, filename)
        with self._lock:
            if text is None:
                path.unlink(missing_ok=True)
            else:
                meta, body = split_frontmatter(text, source=filename)
                check_no_secrets({"name": _str(meta.get("name")), "description": _str(meta.get("description")), "body": body})
                atomic_write(path, text)
            self.rebuild_index()
        self._notify(filename)

    def rebuild_index(self) -> bool:
        """Rewrite MEMORY.md from the files; writes only when the text changes (never when read-only)."""
        if self.read_only:
            return False
        with self._lock:
            if not self._temps_cleaned:  # a crash's leftovers: once per process, not on every save
                self._temps_cleaned = clean_stale_temps(self.path) >= 0 and self.path.is_dir()
            text = render_index(self.all_headers())
            try:
                current = read_text_nofollow(self.index_path)
            except FileNotFoundError:
                current = None
            except SymlinkRefused:
                log.warning("%s is a symbolic link; the index was not rewritten (replace the link with a file)", self.index_path)
                return False
            if current == text or (current is None and not text):
                return False
            atomic_write(self.index_path, text)
            return True

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

    def changed_on_disk(self, filename: str) -> None:
        """Tell listeners about a change made outside memoryd (a hand edit the watcher saw)."""
        self._notify(filename)

    def _notify(self, filename: str) -> None:
        for callback in list(self.on_change):
            try:
                callback(self, filename)
            except Exception:  # a listener's bug must not fail a write that already succeeded
                log.exception("memory change listener failed for %s", filename)
