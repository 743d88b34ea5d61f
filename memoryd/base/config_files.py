"""Reading a config or settings file a person keeps (config.toml, a Claude Code settings file), perhaps as a
link into a dotfiles repo: bounded, never a FIFO or device, each refusal a `FileRefused` naming why."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal


class FileRefused(OSError):
    """A config or settings file memoryd will not read, named with why: `why` is kind, size or access."""

    def __init__(self, message: str, why: Literal["kind", "size", "access"]) -> None:
        super().__init__(message)
        self.why = why


_KINDS = {
    stat.S_IFREG: "a regular file",
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def file_kind(mode: int) -> str:
    """What a file is, for messages: "a directory", "a FIFO (named pipe)", ..."""
    return _KINDS.get(stat.S_IFMT(mode), "a device")


def read_small_file(path: Path | str, limit: int) -> tuple[bytes, os.stat_result] | None:
    """`read_small_nofollow` for a file a person may keep as a link (a config or settings file in a
    dotfiles repo): the link is followed, but a FIFO never blocks the open and a device is never read.
    None when there is no such file; FileRefused when it is no regular file, over `limit`, or unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            regular, chunks, size = stat.S_ISREG(st.st_mode), [], 0  # a device is never read (/dev/zero)
            while regular and size <= limit and (chunk := os.read(fd, limit + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileRefused(f"cannot read {path} ({exc.strerror})", "access") from exc
    if not regular:
        raise FileRefused(f"{path} is {file_kind(st.st_mode)}, not a regular file", "kind")
    if size > limit:
        raise FileRefused(f"{path} is over {limit // 1024} KB", "size")
    return b"".join(chunks), st
