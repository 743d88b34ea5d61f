"""Which file a save writes: an existing memory with that type and name (in either dialect), else a new name in the
directory's dialect, suffixed when taken; never a hand-written file that does not parse, and for a create-only
save (an import) never a name in use."""

from __future__ import annotations

import os
from pathlib import Path

from memoryd.base import limits
from memoryd.base.errors import Conflict, InvalidFrontmatter
from memoryd.store import dialect as dialects
from memoryd.store.model import InvalidFile
from memoryd.store.table import HeaderTable


def target_filename(
    table: HeaderTable, path: Path, dialect: dialects.Dialect, name: str, type_: str, *, only_new: bool = False
) -> str:
    """The file a save of (type, name) writes in the directory at `path`, from its header `table`.
    `only_new`: Conflict instead of an update when the name is taken (issue 41: an import overwrote)."""
    found = table.find(type_, name)
    if only_new:
        _refuse_taken(table, path, dialect, name, type_, found)
    if found is not None:
        return found
    base = dialects.new_stem(dialect, type_, name)
    entry = table.get(f"{base}.md")
    if entry is not None and isinstance(entry[1], InvalidFile):
        # A hand-written file that does not parse may be this very memory: never fork or overwrite it.
        raise InvalidFrontmatter(
            f"{entry[1].filename}: {entry[1].error} The file was left untouched: fix or delete it "
            f"by hand, then save again."
        )
    candidate, n = f"{base}.md", 2
    while os.path.lexists(path / candidate):
        candidate, n = f"{base}-{n}.md", n + 1
    return candidate


def _refuse_taken(
    table: HeaderTable, path: Path, dialect: dialects.Dialect, name: str, type_: str, found: str | None
) -> None:
    """A create-only save of a name in use: Claude Code's names (its files' stems) are one namespace
    over every type, so there a name any memory holds is taken."""
    stem = dialects.new_stem(dialect, type_, name)
    if dialect == dialects.CLAUDE_CODE:
        found = found or next((f for t in limits.MEMORY_TYPES if (f := table.find(t, name)) is not None), None)
    if found is None and os.path.lexists(path / f"{stem}.md"):
        found = f"{stem}.md"
    if found is not None:
        raise Conflict(
            f"{found} already holds a memory named {name!r}; nothing was written (save it under another name)."
        )
