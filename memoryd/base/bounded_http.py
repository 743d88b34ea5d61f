"""`BoundedConnection`: an http.client connection whose every call ends by one wall-clock deadline and reads at
most a set number of bytes (issue #52).

A socket's timeout bounds each read, not the call: a program on memoryd's port that sends one byte every 0.5 s
held a client for good, and one whose chunked answer never ends filled its memory. Here every send and every
read of the socket first takes the time left before the call's deadline as its timeout, and every byte read
(status line, headers, chunk framing and body alike) counts against the call's byte limit. Standard library
only, and no dataclasses: the CLI's fast start imports this.
"""

from __future__ import annotations

import http.client
import io
import math
import socket
import time

READ_BUFFER_BYTES = 64 * 1024


class Overdue(TimeoutError):
    """Raised when a call's deadline passes before its answer is read whole."""


class AnswerTooLarge(http.client.HTTPException):
    """Raised when an answer passes the call's byte limit (or announces a length past it)."""


class Allowance:
    """What the call in flight may still spend: the deadline (time.monotonic) and the bytes it may read. A plain
    class: dataclasses would cost every CLI start ~6 ms (its import of inspect)."""

    __slots__ = ("deadline", "max_bytes", "received")

    def __init__(self) -> None:
        self.deadline, self.max_bytes, self.received = math.inf, 0, 0

    def left(self) -> float:
        """Seconds until the deadline; Overdue once it has passed."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Overdue("the call's deadline passed")
        return left

    def count(self, n: int) -> None:
        self.received += n
        if self.received > self.max_bytes:
            raise AnswerTooLarge(f"the answer passed {self.max_bytes} bytes")


class _SocketReader(io.RawIOBase):
    """The socket's bytes, each read within the time left and counted (the socket stays open while it is read)."""

    def __init__(self, sock: socket.socket, allowance: Allowance) -> None:
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)  # refcounted: a `Connection: close` answer is still read
        self._allowance = allowance

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        self._sock.settimeout(self._allowance.left())
        n = self._raw.readinto(buffer) or 0
        self._allowance.count(n)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


class _BoundedBuffer(io.BufferedReader):
    """http.client asks for a body (or a chunk) whole: a size past the limit is refused before it is allocated."""

    def __init__(self, raw: _SocketReader, allowance: Allowance) -> None:
        super().__init__(raw, READ_BUFFER_BYTES)
        self._allowance = allowance

    def read(self, size: int | None = -1) -> bytes:
        if size is not None and size > self._allowance.max_bytes:
            raise AnswerTooLarge(f"the answer announced {size} bytes, past {self._allowance.max_bytes}")
        return super().read(size)


def _response_class(allowance: Allowance) -> type[http.client.HTTPResponse]:
    """The response type of one connection: it reads through that connection's allowance."""

    class BoundedResponse(http.client.HTTPResponse):
        def __init__(self, sock: socket.socket, debuglevel: int = 0, method: str | None = None, url: str | None = None):
            super().__init__(sock, debuglevel, method, url)
            self.fp.close()
            self.fp = _BoundedBuffer(_SocketReader(sock, allowance), allowance)

    return BoundedResponse


class BoundedConnection(http.client.HTTPConnection):
    """An HTTPConnection whose connect, sends and reads keep to the allowance set by `allow` before each call."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        self.allowance = Allowance()
        self.response_class = _response_class(self.allowance)

    def allow(self, deadline: float, max_bytes: int) -> None:
        """The next exchange ends by `deadline` (time.monotonic) and reads at most `max_bytes`."""
        self.allowance.deadline, self.allowance.max_bytes, self.allowance.received = deadline, max_bytes, 0

    def connect(self) -> None:
        self.timeout = self.allowance.left()
        super().connect()

    def send(self, data: object) -> None:
        if self.sock is not None:
            self.sock.settimeout(self.allowance.left())
        super().send(data)  # type: ignore[arg-type]
