"""What the daemon asks of its own process beyond Python: handing freed heap pages and mapped model pages back."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@functools.cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if name else None


def release_freed_memory() -> None:
    """Ask glibc to return the free pages of its heap after a burst of short-lived allocations (a big
    index build), so the daemon's RSS does not stay at the peak. A no-op without glibc."""
    libc = _libc()
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim(0)


# glibc's mallopt parameter numbers
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
TCACHE_TUNABLE = "glibc.malloc.tcache_count=0"  # `restart_without_thread_caches`
MALLOC_ARENAS = 2  # glibc's default is 8 per core, one per thread that allocates: each keeps its own freed pages
# A block this big or bigger gets its own mapping, unmapped when freed; the heap's free top beyond this much goes
# back at once. glibc's own start values, kept fixed: by default each freed big block (the engine's buffers, a
# ranking's score array) raises both to its size, up to 32 / 64 MB, so later big temporaries land in the heap and
# their freed pages stay resident (issue 42: 29 MB of free heap at 20,000 memories; 6 MB with these).
MALLOC_MMAP_THRESHOLD = 128 * 1024
MALLOC_TRIM_THRESHOLD = 128 * 1024


def tune_malloc() -> dict[str, bool]:
    """Fewer glibc heaps for the daemon's threads (requests, watcher, index builds, fsyncs), and big
    blocks kept out of them (`MALLOC_MMAP_THRESHOLD`), so freed pages do not stay resident. Call before
    threads start. Returns which settings glibc took (all False without glibc)."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None:
        return {"arena_max": False, "mmap_threshold": False, "trim_threshold": False}
    return {
        "arena_max": mallopt(M_ARENA_MAX, MALLOC_ARENAS) == 1,
        "mmap_threshold": mallopt(M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD) == 1,
        "trim_threshold": mallopt(M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD) == 1,
    }


def mapped_files() -> list[tuple[int, int, str, int, str]]:
    """(start, end, permissions, file offset, path) of each of this process's mappings of a file, from
    /proc/self/maps ([] without it)."""
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in maps:
        fields = line.split(maxsplit=5)
        if len(fields) == 6:
            start, end = (int(x, 16) for x in fields[0].split("-"))
            found.append((start, end, fields[1], int(fields[2], 16), fields[5]))
    return found


def _read_only_maps(names: set[str]) -> list[tuple[int, int, int, str]]:
    """(start, end, file offset, path) of this process's read-only private mappings of these files."""
    return [
        (start, end, offset, path)
        for start, end, perms, offset, path in mapped_files()
        if perms == "r--p" and path in names
    ]


@functools.cache
def _madvise() -> Any:
    """libc's madvise with its argument types set, once (each query's hand-back calls it)."""
    madvise = getattr(_libc(), "madvise", None)
    if madvise is not None:
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return madvise


def _madvise_dontneed(start: int, length: int) -> bool:
    madvise = _madvise()
    return madvise is not None and bool(madvise(start, length, mmap.MADV_DONTNEED) == 0)


@dataclass(frozen=True)
class ReadOnlyMapping:
    """This process's read-only mapping of a whole data file that is never written (an engine's weights):
    any of its pages can be handed back at any time, and is mapped again from the page cache when read."""

    start: int
    end: int

    @classmethod
    def find(cls, path: Path) -> ReadOnlyMapping | None:
        """The mapping of `path` from its first byte (None without /proc, or when it is not mapped so)."""
        whole = [(start, end) for start, end, offset, _ in _read_only_maps({str(path.resolve())}) if offset == 0]
        return cls(*whole[0]) if len(whole) == 1 else None

    def hand_back(self, offset: int, length: int) -> int:
        """The whole pages of the file's bytes [offset, offset + length) back; returns the bytes advised."""
        page = mmap.PAGESIZE
        low = self.start + -(-offset // page) * page
        high = min(self.end, self.start + (offset + length) // page * page)
        return high - low if high > low and _madvise_dontneed(low, high - low) else 0


def restart_without_thread_caches() -> None:
    """Start this process over, once, with glibc's per-thread caches of freed blocks off (same pid, same
    arguments): the daemon's ~35 threads each kept up to 7 freed blocks of every size to 1 KB, filled slowly as
    requests moved between threads, and RSS under the 10-minute soak climbed ~3.5 MB for minutes and stayed
    there; without them it is flat, and the soak ran as fast (issue 42, bench/RESULTS.md §20). glibc reads its
    tunables only at start, hence the exec. Linux with glibc only; a no-op once GLIBC_TUNABLES sets it."""
    if sys.platform != "linux" or not _glibc_version():
        return
    current = os.environ.get("GLIBC_TUNABLES", "")
    if TCACHE_TUNABLE.split("=")[0] in current:
        return
    os.environ["GLIBC_TUNABLES"] = f"{current}:{TCACHE_TUNABLE}" if current else TCACHE_TUNABLE
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(sys.executable, sys.orig_argv)
    except OSError:  # no exec here (a sandbox): run on with the caches
        if current:
            os.environ["GLIBC_TUNABLES"] = current
        else:
            del os.environ["GLIBC_TUNABLES"]


def _glibc_version() -> str:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):  # not glibc (musl, macOS)
        return ""


def unmap_read_only_pages(files: Iterable[Path]) -> int:
    """Drop this process's page-table entries for its read-only mappings of these data files (an
    embedding model's weights, mapped by its engine and never written): the pages stay in the
    kernel's page cache, shared and reclaimable, and are mapped again as the engine next reads
    them. After a big batch the engine had touched nearly the whole 71 MB file, all counted in RSS
    (issue 42). `files`: data files mapped read-only and never written, never a library (its
    relocated pages would be lost). Returns the bytes advised; 0 without Linux's /proc or libc."""
    names = {str(f) for f in files}
    return sum(end - start for start, end, _, _ in _read_only_maps(names) if _madvise_dontneed(start, end - start))


def lower_priority(nice: int) -> None:
    """Raise the calling thread's niceness to `nice` (Linux: per thread; threads it starts later
    inherit it), so a background worker yields the cores to requests. Best effort."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass


def pid_alive(pid: int) -> bool:
    """Is `pid` running? A killed process its parent has not reaped yet (a zombie) counts as dead."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: field 3 of /proc/<pid>/stat is the state; "Z" = zombie
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
