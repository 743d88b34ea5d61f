"""What the daemon asks of its own process beyond Python: handing freed heap pages back."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
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
