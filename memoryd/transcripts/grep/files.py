"""Which transcript files a search reads: a project's folders (or all), newest first, no symlinks.

A symlink inside a transcript root is never followed (file or folder), so a search cannot read
outside the roots; files are opened with O_NOFOLLOW too, in case one is swapped for a link.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from memoryd.base import limits

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # Windows has none (and no symlinks by default)


class Transcript(NamedTuple):
    path: Path
    size: int
    mtime: float


Found = tuple[int, int, bytes]  # what an engine gives per matching line: (index in the file list, line number, line)


def transcripts(dirs: list[Path]) -> list[Transcript]:
    """Every regular `.jsonl` file under the folders, newest first (recent sessions are the
    likelier answer); symlinked files and folders are skipped."""
    found: list[Transcript] = []
    stack = list(dirs)
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
            elif stat.S_ISREG(st.st_mode) and entry.name.endswith(".jsonl"):
                found.append(Transcript(Path(entry.path), st.st_size, st.st_mtime))
    found.sort(key=lambda t: (-t.mtime, str(t.path)))
    return found


def read_line(path: Path, offset: int) -> bytes | None:
    """The line starting at `offset`, without its newline, cut at GREP_LINE_MAX_BYTES; None when
    the file cannot be opened (gone, or swapped for a symlink)."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except OSError:
        return None
    try:
        parts: list[bytes] = []
        size = 0
        while size < limits.GREP_LINE_MAX_BYTES:
            data = os.pread(fd, min(64 * 1024, limits.GREP_LINE_MAX_BYTES - size), offset + size)
            end = data.find(b"\n")
            parts.append(data if end < 0 else data[:end])
            size += len(data)
            if end >= 0 or not data:
                break
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
