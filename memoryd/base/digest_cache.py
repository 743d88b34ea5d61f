"""What was derived from a memory's text, kept by the text's 16-byte digest (not the text itself), so a file
touched but unchanged or a store read again is not derived twice; least recently used first out."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def text_digest(parts: tuple[str, ...]) -> bytes:
    """The 16-byte digest a text's parts are kept by (in memory here, on disk by recall/derived_cache.py)."""
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).digest()


class DigestCache(Generic[T]):
    """`get(parts, make)`: make(*parts) once per distinct text, at most `kept` results held, thread-safe."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._found: OrderedDict[bytes, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, parts: tuple[str, ...], make: Callable[..., T]) -> T:
        key = text_digest(parts)
        with self._lock:
            have = self._found.get(key)
            if have is not None:
                self._found.move_to_end(key)
                return have
        got = make(*parts)
        with self._lock:
            self._found[key] = got
            while len(self._found) > self.kept:
                self._found.popitem(last=False)
        return got
