"""Hostile inputs that are cheap to make: a stream of bytes never held at once (a tar bomb's member)."""

from __future__ import annotations

import io
from typing import Any


class RepeatedBytes(io.RawIOBase):
    """`size` bytes of 'a', produced as they are read."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = b"a" * n
        self.left -= n
        return n
