"""What the daemon asks of its own process beyond Python: handing freed heap pages and mapped model pages back."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import os
import threading
from collections.abc import Iterable
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


M_ARENA_MAX = -8  # glibc's mallopt parameter number
MALLOC_ARENAS = 2  # glibc's default is 8 per core, one per thread that allocates: each keeps its own freed pages


def limit_malloc_arenas() -> None:
    """Fewer glibc heaps for the daemon's threads (requests, watcher, index builds, fsyncs): at 20,000
    memories this keeps ~7 MB of freed pages from staying resident. Call before threads start."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is not None:
        mallopt(M_ARENA_MAX, MALLOC_ARENAS)


def unmap_read_only_pages(files: Iterable[Path]) -> int:
    """Drop this process's page-table entries for its read-only mappings of these data files (an
    embedding model's weights, mapped by its engine and never written): the pages stay in the
    kernel's page cache, shared and reclaimable, and are mapped again as the engine next reads
    them. After a big batch the engine had touched nearly the whole 71 MB file, all counted in RSS
    (issue 42). `files`: data files mapped read-only and never written, never a library (its
    relocated pages would be lost). Returns the bytes advised; 0 without Linux's /proc or libc."""
    madvise = getattr(_libc(), "madvise", None)
    names = {str(f) for f in files}
    if madvise is None or not names:
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return 0
    advised = 0
    for line in maps:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[1] == "r--p" and fields[5] in names:
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if madvise(start, end - start, mmap.MADV_DONTNEED) == 0:
                advised += end - start
    return advised


def lower_priority(nice: int) -> None:
    """Raise the calling thread's niceness to `nice` (Linux: per thread; threads it starts later
    inherit it), so a background worker yields the cores to requests. Best effort."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass
