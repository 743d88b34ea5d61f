"""Programs on memoryd's port that try to hold or flood a client (issue #52): a real socket server whose answer
drips one byte every 0.5 s, never ends (an endless chunked body, a chunk-size line without end), or is a plain
JSON answer; and `python3 -m http.server`, the program a person most likely left on the port (issue #51).
Each keeps every byte a client sent it, so a test can say what reached it."""

from __future__ import annotations

import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

DRIP_SECONDS = 0.5
CHUNK = b"x" * 65536
OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
CHUNKED_HEAD = OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
PLAIN_BODY = b'{"status": "ok", "saved": true}'
CLIENT_ADDRESS_SPACE = 1024**3  # a client may map this much: the old ones died past it with a MemoryError
MCP_CALL_ID = 2
RSS_POLL_SECONDS = 0.02


def drip(conn: socket.socket, stop: threading.Event) -> None:
    """A status line, then one header byte every 0.5 s for as long as the client listens."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Drip: ")
    while not stop.wait(DRIP_SECONDS):
        conn.sendall(b"a")


def endless_chunks(conn: socket.socket, stop: threading.Event) -> None:
    """A chunked body whose chunks (64 KB each) never end, as fast as the client takes them."""
    conn.sendall(CHUNKED_HEAD)
    frame = b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n"
    while not stop.is_set():
        conn.sendall(frame)


def endless_chunk_size(conn: socket.socket, stop: threading.Event) -> None:
    """A chunked body whose first chunk-size line never ends."""
    conn.sendall(CHUNKED_HEAD)
    while not stop.is_set():
        conn.sendall(b"f" * 65536)


def plain_answer(conn: socket.socket, stop: threading.Event) -> None:
    """Any request answered 200 with a small JSON object that is no answer of memoryd's (and proves nothing)."""
    while not stop.is_set():
        conn.sendall(OK_HEAD + b"Content-Length: %d\r\n\r\n" % len(PLAIN_BODY) + PLAIN_BODY)
        stop.wait(0.2)


Behaviour = Callable[[socket.socket, threading.Event], None]


class HostilePeer:
    """`with HostilePeer(drip) as p:` listens on `p.port`; each connection gets `behaviour` once the client
    has sent something, and `p.received()` is every byte clients sent."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port: int = self.listener.getsockname()[1]
        self._stop = threading.Event()
        self._received: list[bytes] = []
        self._lock = threading.Lock()

    def __enter__(self) -> HostilePeer:
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._stop.set()

    def received(self) -> bytes:
        with self._lock:
            return b"".join(self._received)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()
        self.listener.close()

    def _connection(self, conn: socket.socket) -> None:
        spoke = threading.Event()
        threading.Thread(target=self._record, args=(conn, spoke), daemon=True).start()
        try:
            if spoke.wait(10):
                self.behaviour(conn, self._stop)
        except OSError:
            pass  # the client hung up: what the peer wants
        finally:
            conn.close()

    def _record(self, conn: socket.socket, spoke: threading.Event) -> None:
        try:
            while data := conn.recv(65536):
                with self._lock:
                    self._received.append(data)
                spoke.set()
        except OSError:
            pass
        spoke.set()


class HttpServerOnPort:
    """`python3 -m http.server` on a free loopback port, serving an empty directory (its 404 page is HTML)."""

    def __init__(self, directory: Path) -> None:
        probe = socket.create_server(("127.0.0.1", 0))
        self.port: int = probe.getsockname()[1]
        probe.close()
        directory.mkdir(parents=True, exist_ok=True)
        self._args = [sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1"]
        self._cwd = directory
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HttpServerOnPort:
        self.proc = subprocess.Popen(self._args, cwd=self._cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.__exit__()
        raise RuntimeError(f"http.server did not listen on {self.port}")

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


@dataclass(frozen=True, kw_only=True)
class ClientRun:
    """A client subprocess's exit: its code, output, seconds to fail (to exit; for MCP, to answer the call) and
    peak resident memory (its VmHWM, read every 20 ms: wait4's ru_maxrss would count the parent's memory at fork)."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CLIENT_ADDRESS_SPACE, CLIENT_ADDRESS_SPACE))


def run_client(
    args: list[str], env: dict[str, str], *, stdin: bytes = b"", answered: bytes | None = None, timeout: float = 60
) -> ClientRun:
    """`python -m memoryd ARGS` fed `stdin`, its address space capped at 1 GB. With `answered`, stdin stays open
    (an MCP server runs until it closes) until that text is on stdout, and `seconds` is the time from the first
    line on stdout (the server's start-up done) to it."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryd", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=_limit_memory,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(stdin)
    proc.stdin.flush()
    if answered is None:
        proc.stdin.close()
    out, err, seconds, peak_kb = _collect(proc, started, answered, timeout)
    if time.monotonic() - started > timeout:
        proc.kill()
    proc.wait()
    return ClientRun(
        returncode=proc.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        seconds=seconds if seconds is not None else time.monotonic() - started,
        max_rss_mb=peak_kb / 1024,
    )


def _peak_kb(pid: int) -> int:
    """The client's resident high-water mark (0 before it runs memoryd: a forked child holds its parent's pages,
    and once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if b"\0-m\0memoryd\0" not in fh.read():
                return 0
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmHWM:")), 0)
    except OSError:
        return 0


def _collect(
    proc: subprocess.Popen[bytes], started: float, answered: bytes | None, timeout: float
) -> tuple[bytes, bytes, float | None, int]:
    """Both pipes read until they close or `timeout` passes, the peak RSS read meanwhile; stdin closed once
    `answered` shows on stdout."""
    assert proc.stdin and proc.stdout and proc.stderr
    chunks = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    seconds, ready, peak = None, started, 0
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map() and (left := started + timeout - time.monotonic()) > 0:
            peak = max(peak, _peak_kb(proc.pid))
            for key, _ in sel.select(min(left, RSS_POLL_SECONDS)):
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(key.fd)
                if key.fd == proc.stdout.fileno() and not chunks[key.fd]:
                    ready = time.monotonic()
                chunks[key.fd] += data
            if answered is not None and seconds is None and answered in chunks[proc.stdout.fileno()]:
                seconds = time.monotonic() - ready
                proc.stdin.close()
    return bytes(chunks[proc.stdout.fileno()]), bytes(chunks[proc.stderr.fileno()]), seconds, peak


def mcp_call(tool: str, arguments: dict[str, Any]) -> bytes:
    """What an agent sends `memoryd mcp` to call one tool: initialize, initialized, the call (id MCP_CALL_ID)."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": MCP_CALL_ID, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
    ]
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def mcp_answer(stdout: str) -> dict[str, Any]:
    """The tool call's result in an MCP server's stdout ({} when it never came)."""
    for line in stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("id") == MCP_CALL_ID:
            return dict(message.get("result") or message.get("error") or {})
    return {}
