"""The built-in scanner, used when rg is absent or `[transcripts] ripgrep = "off"`.

Plain on purpose: each file is read in chunks ending at a newline; a literal is found with
`bytes.find` (on the lowered chunk for -i, which lowers ASCII only, as the regex does), a regex
is run only on lines holding the literal it requires, else over the chunk.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

from memoryd.base import limits
from memoryd.transcripts.grep.files import NOFOLLOW, Found, Transcript
from memoryd.transcripts.grep.pattern import Pattern


def _matching_lines(pattern: Pattern, block: bytes) -> Iterator[tuple[int, int]]:
    """(start, stop) of each line of `block` the pattern matches, in order."""
    regex, literal = pattern.regex, pattern.literal
    hay = block.lower() if literal is not None and pattern.ignore_case else block
    pos = 0
    while pos < len(block):
        if literal is not None:
            at = hay.find(literal, pos)
        else:
            m = regex.search(block, pos)
            at = -1 if m is None else m.start()
        if at < 0:
            return
        start = block.rfind(b"\n", 0, at) + 1
        stop = block.find(b"\n", at)
        stop = len(block) if stop < 0 else stop
        # The regex confirms the line on its own (a bare match may have run past it, e.g. via \s).
        if pattern.exact or regex.search(block, start, stop) is not None:
            yield start, stop
        pos = stop + 1


def scan_file(
    pattern: Pattern, path: Path, expired: Callable[[], bool]
) -> Generator[tuple[int, bytes] | None, None, None]:
    """(line number, line) of each matching line; None (then nothing) when time runs out. A line
    longer than GREP_LINE_MAX_BYTES is searched in pieces of that size; an unreadable file has none."""
    try:
        # opened apart from its `with` so that a file that cannot be opened yields nothing
        f = open(path, "rb", buffering=0, opener=lambda p, flags: os.open(p, flags | NOFOLLOW))  # noqa: SIM115
    except OSError:
        return
    line_no, last_hit = 1, 0
    pending = b""  # the unfinished last line of the previous read
    with f:
        while True:
            try:
                data = f.read(limits.GREP_CHUNK_BYTES)
            except OSError:  # vanished or unreadable mid-scan: keep the lines found so far
                return
            buf = pending + data
            cut = buf.rfind(b"\n") + 1 if data else len(buf)
            if cut == 0 and data:  # no newline yet: read more of the line, up to the cap
                if len(buf) < limits.GREP_LINE_MAX_BYTES:
                    pending = buf
                    continue
                cut = len(buf)  # a giant line: search this piece on its own
            block, pending = buf[:cut], buf[cut:]
            counted = 0
            for start, stop in _matching_lines(pattern, block):
                line_no += block.count(b"\n", counted, start)
                counted = start
                if line_no != last_hit:  # a giant line's pieces count once
                    last_hit = line_no
                    yield line_no, block[start:stop]
            line_no += block.count(b"\n", counted)
            if not data:
                return
            if expired():
                yield None
                return


def scan(
    pattern: Pattern, files: list[Transcript], max_hits: int, expired: Callable[[], bool], start: int = 0
) -> Generator[Found | None, None, None]:
    """Matching lines of the files from `start` on, in order, at most `max_hits`; None (then
    nothing) when time runs out."""
    found = 0
    for index in range(start, len(files)):
        transcript = files[index]
        if expired():
            yield None
            return
        for hit in scan_file(pattern, transcript.path, expired):
            if hit is None:
                yield None
                return
            yield index, hit[0], hit[1]
            found += 1
            if found >= max_hits:
                return
