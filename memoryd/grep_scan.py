"""Byte-level transcript scanning: the part of grep that runs in-process or in a worker process.

It imports only the stdlib and `memoryd.limits`, so spawned grep workers start fast and stay
small. Callers build a picklable `Plan` (what to look for); a `Scanner` owns one reusable read
buffer and turns each file into a `FileScan` (matching lines with their numbers).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Callable, Generator, NamedTuple, TypeVar

from memoryd import limits

_P = TypeVar("_P", bound="str | os.PathLike[str]")
_UPPER = bytes(range(ord("A"), ord("Z") + 1))


@dataclass(frozen=True)
class Plan:
    """What one search looks for. `literal` is required in every matching line (lowered when
    `fold`); `regex` (with `flags`) confirms a line; `anchors` are the case variants of one rare
    literal byte at `anchor_at`, found with memchr before the literal is checked; `probe` (folded
    literals) is a letter-free part of the literal at `probe_at`, found untranslated instead."""

    literal: bytes | None = None
    fold: bool = False
    regex: bytes | None = None
    flags: int = 0
    anchors: tuple[int, ...] = ()
    anchor_at: int = 0
    probe: bytes = b""
    probe_at: int = 0
    chunk_bytes: int = 0  # 0: limits.GREP_CHUNK_BYTES (carried so workers see the caller's values)
    line_max_bytes: int = 0  # 0: limits.GREP_LINE_MAX_BYTES


class FileScan(NamedTuple):
    """One file's matching lines `(line number, raw line)`; `status` says why the scan ended:
    "done" (whole file), "hits" (max hits reached), "deadline", or "error" (unreadable; no bytes
    are counted, as the file may have gone)."""

    hits: list[tuple[int, bytes]]
    bytes_read: int
    status: str


def fold_variants(byte: int, fold: bool) -> tuple[int, ...]:
    """The byte values that match `byte` (a lowered byte) under ASCII case folding."""
    if fold and ord("a") <= byte <= ord("z"):
        return (byte, byte - 32)
    return (byte,)


def choose_anchor(literal: bytes, fold: bool, sample: bytes) -> tuple[tuple[int, ...], int]:
    """The literal byte rarest in `sample` (case variants counted together), as (variants, offset),
    or ((), 0) when even the rarest is too common for a memchr prefilter to pay off."""
    if not literal or not sample:
        return (), 0
    counts = {v: sample.count(bytes((v,))) for b in set(literal) for v in fold_variants(b, fold)}
    best: tuple[int, int, tuple[int, ...], int] | None = None
    for at, byte in enumerate(literal):
        variants = fold_variants(byte, fold)
        count = sum(counts[v] for v in variants)
        key = (count, len(variants))
        if best is None or key < best[:2]:
            best = (count, len(variants), variants, at)
    assert best is not None
    if best[0] * limits.GREP_ANCHOR_MAX_RATE > len(sample):
        return (), 0
    return best[2], best[3]


def choose_probe(literal: bytes, fold: bool, sample: bytes) -> tuple[bytes, int]:
    """What a folded literal is found by, as (probe, offset); (b"", 0) means the whole literal.

    Translating a chunk for case folding costs more than searching it, so the literal's longest
    run without letters, when long and rare in the sample, is found in the raw bytes instead."""
    if not fold:
        return b"", 0
    runs = [(len(m.group()), -m.start(), m.group()) for m in re.finditer(rb"[^a-z]+", literal)]
    if not runs:
        return b"", 0
    n, at, run = max(runs)
    if run == literal or (n >= limits.GREP_PROBE_MIN_BYTES and sample and sample.count(run) * limits.GREP_ANCHOR_MAX_RATE <= len(sample)):
        return run, -at
    return b"", 0


def fold_table(literal: bytes) -> bytes:
    """A translate table mapping each byte that lowercases to a byte of the (lowered) literal to
    that byte and every other byte to one filler byte absent from the literal.

    Finding the literal in a translated buffer gives exactly the ASCII case-insensitive matches,
    and a filler outside the literal's bloom classes (byte & 63) lets `find` skip ahead. A lowered
    literal never holds 'A'-'Z', so a filler always exists."""
    wanted = set(literal)
    classes = {b & 63 for b in wanted}
    free = [b for b in range(256) if b not in wanted]
    filler = next((b for b in free if b & 63 not in classes), free[0])
    table = bytearray([filler]) * 256
    for b in range(256):
        low = b + 32 if b in _UPPER else b
        if low in wanted:
            table[b] = low
    return bytes(table)


class _Literal:
    """Finds the next occurrence of a required literal in a chunk.

    With anchors it memchr-scans for the rare byte and checks the literal around each hit; with a
    probe (a letter-free part of a folded literal) it `find`s that in the raw chunk and checks the
    rest. When either is too often a false lead in a chunk, the file goes on with a plain `find`
    of the whole literal (on the translated chunk when folding case)."""

    def __init__(self, plan: Plan) -> None:
        assert plan.literal is not None
        self.lit = plan.literal
        self.m = len(plan.literal)
        self.fold = plan.fold
        self.plan_anchors = tuple(bytes((v,)) for v in plan.anchors)
        self.at = plan.anchor_at
        self.plan_probe = plan.probe
        self.probe_at = plan.probe_at
        self.table = fold_table(plan.literal) if plan.fold else b""
        self.reset_file()

    def reset_file(self) -> None:
        self.anchors = self.plan_anchors
        self.probe = self.plan_probe
        self.new_chunk()

    def new_chunk(self) -> None:
        self.hay: bytes | bytearray | None = None
        self.misses = 0
        # Per anchor variant: its next position in this chunk, -1 none left, -2 not looked yet.
        self.next_at = [-2] * len(self.anchors)

    def _budget(self, end: int) -> int:
        """False leads per chunk before a plain find of the literal is cheaper."""
        return 64 + end // limits.GREP_ANCHOR_MAX_RATE

    def _is_at(self, buf: bytearray, s: int) -> bool:
        return (buf[s:s + self.m].lower() == self.lit) if self.fold else buf.startswith(self.lit, s)

    def find(self, buf: bytearray, pos: int, end: int) -> int:
        if self.anchors:
            found = self._anchored(buf, pos, end)
            if found != -2:
                return found
        if self.probe:
            found = self._probed(buf, pos, end)
            if found != -2:
                return found
        return self._search(buf, pos, end)

    def _search(self, buf: bytearray, pos: int, end: int) -> int:
        if not self.fold:
            return buf.find(self.lit, pos, end)
        if self.hay is None:  # one translation per chunk, reused for every find in it
            self.hay = buf.translate(self.table)
        return self.hay.find(self.lit, pos, end)

    def _probed(self, buf: bytearray, pos: int, end: int) -> int:
        """Next literal start at or after pos, found via the probe; -2 asks to fall back."""
        probe, at = self.probe, self.probe_at
        hi = end - self.m + at + len(probe)  # a match starting at s has its probe at s + at and ends by `end`
        i = pos + at
        while True:
            p = buf.find(probe, i, hi)
            if p < 0:
                return -1
            if self._is_at(buf, p - at):
                return p - at
            self.misses += 1
            if self.misses > self._budget(end):
                self.probe = b""
                return -2
            i = p + 1

    def _anchored(self, buf: bytearray, pos: int, end: int) -> int:
        """Next literal start at or after pos, found via the anchor byte; -2 asks to fall back.

        Calls within a chunk come with growing `pos`, so each variant's next position is kept."""
        m, at, nxt = self.m, self.at, self.next_at
        hi = end - m + at + 1  # a match starting at s has its anchor at s + at and ends by `end`
        i = pos
        while True:
            best = -1
            for k, v in enumerate(self.anchors):
                n = nxt[k]
                if n == -2 or 0 <= n < i + at:
                    n = nxt[k] = buf.find(v, i + at, hi)
                if n >= 0 and (best < 0 or n < best):
                    best = n
            if best < 0:
                return -1
            s = best - at
            if self._is_at(buf, s):
                return s
            self.misses += 1
            if self.misses > self._budget(end):
                self.anchors = ()
                self.misses = 0
                return -2
            i = s + 1


class Scanner:
    """Scans files for a plan with one reused read buffer; yields at most `max_hits` lines per file."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.regex = re.compile(plan.regex, plan.flags | re.MULTILINE) if plan.regex is not None else None
        self.literal = _Literal(plan) if plan.literal is not None else None
        self.chunk = plan.chunk_bytes or limits.GREP_CHUNK_BYTES
        self.line_max = plan.line_max_bytes or limits.GREP_LINE_MAX_BYTES
        self.buf = bytearray(self.chunk)
        self._count_buf: bytearray | None = None
        self.prefilter = True
        self.misses = 0

    def _next_line(self, buf: bytearray, pos: int, end: int) -> tuple[int, int]:
        """(start, stop) of the next matching line at or after pos, or (-1, -1)."""
        regex, literal = self.regex, self.literal
        while pos < end:
            if literal is not None and self.prefilter:
                at = literal.find(buf, pos, end)
                if at < 0:
                    return -1, -1
                start = buf.rfind(b"\n", 0, at) + 1
                stop = buf.find(b"\n", at, end)
                stop = end if stop < 0 else stop
                if regex is None or regex.search(buf, start, stop) is not None:
                    return start, stop
                pos = stop + 1
                self.misses += 1
                if self.misses > 64 + end // limits.GREP_PREFILTER_MAX_MISS_RATE:  # a common literal: bare regex
                    self.prefilter = False
                continue
            assert regex is not None
            m = regex.search(buf, pos, end)
            if m is None:
                return -1, -1
            start = buf.rfind(b"\n", 0, m.start()) + 1
            stop = buf.find(b"\n", m.start(), end)
            stop = end if stop < 0 else stop
            # A match running past its line (e.g. through \s) only counts if the line matches alone.
            if m.end() <= stop or regex.search(buf, start, stop) is not None:
                return start, stop
            pos = stop + 1
        return -1, -1

    def _count_lines(self, fd: int, start: int, stop: int) -> int:
        """Newlines between two offsets, re-read with a second buffer (only done up to matches)."""
        if self._count_buf is None:
            self._count_buf = bytearray(self.chunk)
        view = memoryview(self._count_buf)
        n = 0
        while start < stop:
            got = os.preadv(fd, [view[: min(len(view), stop - start)]], start)
            if got <= 0:
                break
            n += self._count_buf.count(b"\n", 0, got)
            start += got
        return n

    def scan_file(self, path: str, max_hits: int, expired: Callable[[], bool]) -> FileScan:
        """Matching lines of one file. Each chunk ends at its last newline and the next read starts
        right after it, so no line is split; line numbers are counted lazily, only up to matches."""
        hits: list[tuple[int, bytes]] = []
        known_off, known_line = 0, 1  # a file offset whose line number is known
        pos = 0
        size = self.chunk
        if self.literal is not None:
            self.literal.reset_file()
        self.prefilter = True  # per file: regex lines found through their required literal
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return FileScan([], 0, "error")
        try:
            while True:
                if len(self.buf) < size:
                    self.buf = bytearray(size)
                buf = self.buf
                got = os.preadv(fd, [memoryview(buf)[:size]], pos)
                if got <= 0:
                    return FileScan(hits, pos, "done")
                last = got < size
                end = got if last else buf.rfind(b"\n", 0, got) + 1
                if end == 0:  # a line longer than the chunk: read more of it, up to the cap
                    if size < self.line_max:
                        size *= 2
                        continue
                    end = got  # giant line: search this much of it, then move on
                if self.literal is not None:
                    self.literal.new_chunk()
                self.misses = 0
                at = 0
                while at < end:
                    start, stop = self._next_line(buf, at, end)
                    if start < 0:
                        break
                    if known_off < pos:
                        known_line += self._count_lines(fd, known_off, pos)
                        known_off = pos
                    known_line += buf.count(b"\n", known_off - pos, start)
                    known_off = pos + start
                    hits.append((known_line, bytes(buf[start:stop])))
                    if len(hits) >= max_hits:
                        return FileScan(hits, pos + end, "hits")
                    at = stop + 1
                pos += end
                size = self.chunk
                if last:
                    return FileScan(hits, pos, "done")
                if expired():
                    return FileScan(hits, pos, "deadline")
        except OSError:  # vanished or unreadable mid-scan: keep the lines found so far
            return FileScan(hits, 0, "error")
        finally:
            os.close(fd)


def scan_here(
    plan: Plan, paths: list[_P], max_hits: Callable[[], int], expired: Callable[[], bool]
) -> Generator[tuple[_P, FileScan], None, None]:
    """Scan files one by one in this process, lazily (a file is read only when asked for)."""
    scanner = Scanner(plan)
    for path in paths:
        yield path, scanner.scan_file(str(path), max_hits(), expired)


# --- worker side ------------------------------------------------------------------------
_scanner: Scanner | None = None


def scan_unit(plan: Plan, paths: list[str], max_hits: int, seconds: float) -> list[FileScan]:
    """Worker entry point: scan files in order until `max_hits` lines in all or `seconds` pass.

    Returns one FileScan per file scanned; later files of the unit are skipped once enough lines
    were found (the parent cannot need them) or the deadline passed."""
    global _scanner
    stop_at = time.monotonic() + seconds
    if _scanner is None or _scanner.plan != plan:
        _scanner = Scanner(plan)
    out: list[FileScan] = []
    found = 0
    for path in paths:
        if time.monotonic() >= stop_at:
            out.append(FileScan([], 0, "deadline"))
            break
        scan = _scanner.scan_file(path, max_hits - found, lambda: time.monotonic() >= stop_at)
        out.append(scan)
        found += len(scan.hits)
        if found >= max_hits or scan.status == "deadline":
            break
    return out


def warm() -> int:
    """A no-op task that makes a worker process start (and import this module)."""
    return os.getpid()

