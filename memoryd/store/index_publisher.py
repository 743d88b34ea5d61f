"""`IndexPublisher`: MEMORY.md kept in step with the header table, without losing other writers' lines.

It stages the index's new text beside a memory file so both are published together; after a
write of one file to an index memoryd wrote last, only that file's line moves (no rescan).
"""

from __future__ import annotations

import builtins
import logging
import os
from pathlib import Path

from memoryd import limits
from memoryd.base.files import Key, Staged, SymlinkRefused, TargetMoved, atomic_write, key_if_present, key_now, key_of, publish, read_text_nofollow, stage
from memoryd.errors import Conflict
from memoryd.store.index import IndexLayout, ServedIndex, merge_index, truncate_index
from memoryd.store.model import MemoryHeader
from memoryd.store.table import HeaderTable

log = logging.getLogger(__name__)
INDEX_BACKUP_FILENAME = limits.INDEX_FILENAME + ".before-memoryd"  # the index as found, before memoryd's first rewrite


class IndexPublisher:
    """One dir's MEMORY.md: what memoryd last wrote there (key, layout, its own lines) and how to write it again."""

    def __init__(self, path: Path, *, table: HeaderTable, tmp_dir: Path) -> None:
        self.path = path
        self.index_path = path / limits.INDEX_FILENAME
        self._table = table
        self._tmp_dir = tmp_dir
        self._key: Key | None = None
        self.layout: IndexLayout | None = None
        self._ours: dict[str, str] = {}  # the pointer lines memoryd wrote

    def forget_layout(self) -> None:
        """The table moved without a write of ours: the next update merges from the index as it is."""
        self.layout = None

    def _read(self) -> builtins.list[str] | None:
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

    def update(self, *, changed: str | None = None, header: MemoryHeader | None = None) -> bool:
        """Bring MEMORY.md up to date (renamed into place; the caller fsyncs the dir)."""
        index = self.publish_with([], changed=changed, header=header, sync_dir=False)
        if index is None:
            return False
        self.written(*index)
        return True

    def publish_with(self, staged: builtins.list[Staged], *, changed: str | None, header: MemoryHeader | None,
                     unlink: Path | None = None, sync_dir: bool) -> tuple[Staged, IndexLayout] | None:
        """Publish `staged` with MEMORY.md's new text; when someone else (an agent, an editor)
        writes MEMORY.md meanwhile, merge again from what they wrote instead of overwriting it."""
        for _ in range(limits.WRITE_CHANGED_RETRIES):
            index = self._stage(changed=changed, header=header)
            try:
                if staged or index or unlink:
                    publish(staged + ([index[0]] if index else []), unlink=unlink, sync_dir=sync_dir)
                return index
            except TargetMoved as moved:
                if index:
                    index[0].discard()
                self.layout = None  # the next merge starts from the index as it is now
                if moved.path != self.index_path:
                    raise Conflict(f"{moved.path.name} changed on disk while memoryd wrote it (another editor?); nothing was written: try again.") from None
        raise Conflict(f"{limits.INDEX_FILENAME} keeps changing on disk while memoryd updates it (another editor?); try again when it is quiet.")

    def _stage(self, *, changed: str | None = None, header: MemoryHeader | None = None) -> tuple[Staged, IndexLayout] | None:
        """MEMORY.md's new text staged, keeping every line memoryd did not write; None when it
        does not change. After a write of one file to an index memoryd wrote last, that file's
        line moves alone (no rescan, no re-read)."""
        layout = self.layout
        if layout is not None and changed is not None and self._key is not None and key_if_present(self.index_path) == self._key:
            moved = layout.upsert(header) if header is not None else layout.drop(changed)
            if not moved:
                return None
            return self._stage_layout(layout, self._key), layout
        read_key = key_now(self.index_path)  # before the read (ABSENT: none yet): a write in between is caught at publish
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

    def _stage_layout(self, layout: IndexLayout, built_from: Key) -> Staged:
        lines = layout.lines()
        staged = stage(self.index_path, "\n".join(lines) + "\n" if lines else "", tmp_dir=self._tmp_dir)
        staged.expect = built_from
        return staged

    def written(self, staged: Staged, layout: IndexLayout) -> None:
        """The staged index was published: remember it as ours."""
        self._key, self._ours = key_of(staged.stat), layout.ours()

    def served(self) -> ServedIndex:
        """MEMORY.md as an agent gets it: truncated at 200 lines / 25,000 bytes with the warning."""
        try:
            raw = read_text_nofollow(self.index_path)
        except FileNotFoundError:
            raw = ""
        except (SymlinkRefused, UnicodeDecodeError, IsADirectoryError):
            log.warning("%s is not a readable regular file; serving an empty index", self.index_path)
            raw = ""
        return truncate_index(raw)
