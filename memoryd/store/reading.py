"""Reading one memory file whole (`MemoryDir.get`): sized before it is read, never through a link, never a FIFO
or device; each refusal names the file, what is wrong with it and the fix."""

from __future__ import annotations

import os
from pathlib import Path

from memoryd.base import limits
from memoryd.base.errors import InvalidFrontmatter, MemoryNotFound
from memoryd.base.files import SymlinkRefused, TooLarge, read_capped
from memoryd.store import dialect as dialects
from memoryd.store.frontmatter import split_frontmatter
from memoryd.store.headers import SYMLINK_REFUSAL, TOO_LARGE_FIX, body_of, meta_str, not_a_file, parse_header
from memoryd.store.model import InvalidFile, Memory
from memoryd.store.paths import memory_path
from memoryd.store.write_path import version_of


def load_memory(directory: Path, filename: str) -> Memory:
    """A memory file read whole, or a refusal that names the file, what is wrong and the fix."""
    path = memory_path(directory, filename)
    try:
        raw, st = read_capped(path, limits.MEMORY_FILE_MAX_BYTES)  # sized before it is read (issue 41)
        text, mtime = raw.decode("utf-8"), st.st_mtime
    except FileNotFoundError:
        raise MemoryNotFound(
            f"no memory named {filename!r} in {directory}; list them with GET /v1/memories or `memoryd list`."
        ) from None
    except SymlinkRefused:
        raise InvalidFrontmatter(f"{filename}: {SYMLINK_REFUSAL}") from None
    except TooLarge as exc:
        raise InvalidFrontmatter(f"{filename}: {exc.strerror}: {TOO_LARGE_FIX}") from None
    except IsADirectoryError:  # a FIFO, device or directory: refused unopened (O_NONBLOCK, then fstat)
        raise InvalidFrontmatter(f"{filename}: {not_a_file(os.lstat(path).st_mode)}") from None
    except UnicodeDecodeError:
        raise InvalidFrontmatter(
            f"{filename}: is not UTF-8 text (a binary file?); convert it or move it out of the memory dir."
        ) from None
    except OSError as exc:
        raise InvalidFrontmatter(
            f"{filename}: unreadable ({exc.__class__.__name__}); check its permissions and that it is UTF-8."
        ) from exc
    return parsed_memory(directory, filename, path, text, mtime)


def parsed_memory(directory: Path, filename: str, path: Path, text: str, mtime: float) -> Memory:
    """A memory from the text just read or written (its file stays unread)."""
    header, meta, body_line = parse_header(filename, directory, text, mtime)
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
        applies_to=dialects.applies_of(meta),
        forbid=forbid if isinstance(forbid := dialects.forbid_of(meta), dict) else {},
    )
