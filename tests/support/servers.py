"""Real servers for tests: uvicorn on a pre-bound port-0 socket in a thread, and the daemon
as a subprocess (`python -m memoryd serve`) with its own MEMORYD_HOME."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

# Test clients speak plain HTTP to 127.0.0.1, yet httpx builds a TLS context per client and loads the
# CA bundle into it (~30 ms of CPU each, hundreds of clients per run): they all share this unused one.
LOOPBACK_TLS = ssl.create_default_context()


def loopback_client(base_url: str = "", **kwargs: Any) -> httpx.Client:
    """An httpx client for a loopback server (shares LOOPBACK_TLS)."""
    return httpx.Client(base_url=base_url, verify=LOOPBACK_TLS, **kwargs)


def loopback_request(method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request without a client of one's own, like `httpx.request` (shares LOOPBACK_TLS)."""
    return httpx.request(method, url, verify=LOOPBACK_TLS, **kwargs)


def free_socket(host: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit TCP_NODELAY: without it a keep-alive request waits ~40 ms for a delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, 0))
    sock.listen(128)
    return sock


class _PromptServer(uvicorn.Server):
    """uvicorn's server, woken by `stop()` at once instead of on its next 0.1 s tick."""

    _loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._wake, self._loop = asyncio.Event(), asyncio.get_running_loop()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            try:
                await asyncio.wait_for(self._wake.wait(), 0.1)
            except TimeoutError:
                pass

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown, minus its fixed 0.1 s pause for the connections it asked to close: here
        the wait ends as soon as they are gone (idle keep-alive ones at once; ~200 teardowns a run waited
        it out). Requests still running get `timeout_graceful_shutdown`, as in uvicorn."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 0.1
        while self.server_state.connections and loop.time() < deadline:
            await asyncio.sleep(0.002)
        try:
            await asyncio.wait_for(self._wait_tasks_to_complete(), timeout=self.config.timeout_graceful_shutdown)
        except TimeoutError:
            for t in self.server_state.tasks:
                t.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()

    def stop(self) -> None:
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(wake.set)
            except RuntimeError:  # the loop closed in between: it has stopped anyway
                pass


class ThreadedServer:
    """Serve an ASGI app with uvicorn in a background thread; `url` is ready on enter."""

    def __init__(self, app: Any) -> None:
        self.sock = free_socket()
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        # In-flight requests get 2 s at shutdown (a scripted reply sleeping 30 s must not hold a teardown).
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=2)
        self.server = _PromptServer(config)
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.005)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
        self.thread.join(timeout=15)
        self.sock.close()


@dataclass
class DaemonProcess:
    """`memoryd serve` as a real subprocess."""

    home: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    url: str = ""
    token: str = ""
    log_path: Path = field(default_factory=Path)

    def start(self, timeout: float = 20.0) -> DaemonProcess:
        self.home.mkdir(parents=True, exist_ok=True)
        runtime = self.home / "daemon.json"
        runtime.unlink(missing_ok=True)
        self.log_path = self.home / "stderr.log"
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memoryd", "serve", "--port", "0"], env=self.env, stdout=log, stderr=log
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}:\n{self.log_path.read_text()}")
            if runtime.exists():
                try:
                    data = json.loads(runtime.read_text())
                except json.JSONDecodeError:
                    time.sleep(0.02)
                    continue
                self.url = f"http://{data['host']}:{data['port']}"
                try:
                    if loopback_request("GET", self.url + "/v1/health", timeout=1).status_code == 200:
                        self.token = (
                            (self.home / "token").read_text().strip()
                            if not self.env.get("MEMORYD_TOKEN")
                            else self.env["MEMORYD_TOKEN"]
                        )
                        return self
                except httpx.HTTPError:
                    pass
            time.sleep(0.01)  # a tick is one stat of daemon.json; 50 ms ticks added ~25 ms to every start
        self.kill()
        raise RuntimeError(f"daemon did not become healthy:\n{self.log_path.read_text()}")

    def client(self, **kwargs: Any) -> httpx.Client:
        return loopback_client(
            self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=kwargs.pop("timeout", 10), **kwargs
        )

    def terminate(self, timeout: float = 15.0) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def daemon_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment for a daemon subprocess: no API key unless given, no user config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "ANTHROPIC_", "CLAUDE"))}
    env["MEMORYD_HOME"] = str(home)
    env["MEMORYD_RECALL_DENSE"] = "off"  # no embedding model unless a test asks for it (extra)
    env.update(extra)
    return env
