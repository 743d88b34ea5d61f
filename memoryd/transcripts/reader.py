"""Incremental JSONL reading from a byte offset: only complete lines are consumed, so a
partial last line (CC appends in batches) is read again next time, whole.

It does NOT parse; `parser.parse_lines` does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryd.base import limits
from memoryd.base.files import open_nofollow

CHUNK = 1 << 20


@dataclass(frozen=True)
class ReadResult:
    lines: list[bytes]
    start: int  # offset the lines start at (0 after a reset)
    end: int  # offset just after the last complete line: the next cursor
    inode: int
    size: int
    reset: bool  # the file shrank or was replaced: read again from 0
    oversized: int = 0  # lines over TRANSCRIPT_LINE_MAX_BYTES skipped unread (counted, never parsed)


def read_new_lines(
    path: Path, offset: int = 0, inode: int | None = None, *, max_bytes: int | None = None
) -> ReadResult:
    """Lines completed since `offset`. A file shorter than the offset, with another inode, or
    without a newline just before the offset is re-read from 0 (callers dedupe by uuid).
    Raises OSError when unreadable or not a regular file (a FIFO, a device or a link is never
    opened for reading: a hook names the path, and a FIFO would block the reader; issue #31)."""
    with open_nofollow(path) as fh:
        st = os.fstat(fh.fileno())
        reset = offset > st.st_size or (inode is not None and inode != 0 and inode != st.st_ino)
        if not reset and offset > 0:
            # A cursor always sits just after a newline; anything else means the tail was rewritten
            # (truncated, then re-appended past the old offset) before this read.
            fh.seek(offset - 1)
            reset = fh.read(1) != b"\n"
        start = 0 if reset else offset
        fh.seek(start)
        remaining = st.st_size - start if max_bytes is None else min(st.st_size - start, max_bytes)
        chunks: list[bytes] = []
        while remaining > 0:
            chunk = fh.read(min(CHUNK, remaining))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    data = b"".join(chunks)
    last_newline = data.rfind(b"\n")
    if last_newline == -1:
        return ReadResult([], start, start, st.st_ino, st.st_size, reset)
    complete = data[: last_newline + 1]
    return ReadResult(complete.splitlines(), start, start + len(complete), st.st_ino, st.st_size, reset)


def _end_of_line(path: Path, position: int) -> int | None:
    """The offset just after the first newline at or after `position`, read in small chunks and
    never kept; None when the file ends first (the line is still being written)."""
    with open_nofollow(path) as fh:
        fh.seek(position)
        while chunk := fh.read(CHUNK):
            found = chunk.find(b"\n")
            if found != -1:
                return position + found + 1
            position += len(chunk)
    return None


def iter_batches(
    path: Path,
    offset: int = 0,
    inode: int | None = None,
    *,
    batch_bytes: int = limits.TRANSCRIPT_READ_BATCH_BYTES,
    line_max: int = limits.TRANSCRIPT_LINE_MAX_BYTES,
) -> Iterator[ReadResult]:
    """`read_new_lines` in bounded batches, so a large transcript is never in memory whole.

    The first batch applies the reset checks. A line longer than a batch is found by a streamed
    search for its end (never held, never searched twice); it is then read with a batch that
    fits it when it is at most `line_max`, else skipped unread (a batch with `oversized=1`).
    Stops once a batch reached the end of the file as it was then."""
    batch = batch_bytes
    while True:
        result = read_new_lines(path, offset, inode, max_bytes=batch)
        complete_line = result.end > result.start
        if not complete_line and result.start + batch < result.size:  # one line longer than the batch
            offset, inode = result.start, result.inode
            after = _end_of_line(path, result.start + batch)
            if after is None:
                yield result  # the long line is not finished yet: the cursor stays before it
                return
            if after - result.start <= line_max:
                batch = after - result.start  # exactly the line
                continue
            yield ReadResult([], result.start, after, result.inode, result.size, result.reset, oversized=1)
            offset, batch = after, batch_bytes
            continue
        yield result
        if result.start + batch >= result.size:
            return
        batch = batch_bytes
        offset, inode = result.end, result.inode
