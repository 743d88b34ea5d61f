"""`McpEndpoint`: the MCP server over streamable HTTP at /mcp on the daemon.

The daemon's GuardMiddleware checks the bearer token before a request gets here. Tools call the
daemon's REST API on the address the request came in on (from a worker thread, so the event loop
stays free), so HTTP and stdio share one code path and every write takes the one write path.
The SDK (~25 MB resident) loads on the first /mcp request, so a daemon no MCP client talks to never pays for it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import anyio.to_thread
from starlette.responses import JSONResponse
from starlette.routing import Route

from memoryd.client import MemorydClient

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger(__name__)

PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


class McpEndpoint:
    def __init__(self, token: Callable[[], str], *, hosts: Iterable[str] = LOOPBACK) -> None:
        """`hosts`: the bare host names a request's Host (and Origin) may carry, as the daemon's own check allows."""
        self._token = token
        self._hosts = [f"[{h}]" if ":" in h else h for h in hosts]
        self._base_url = ""
        self._server: MCPServer | None = None
        self._app: ASGIApp | None = None
        self._ready: anyio.Event | None = None
        self._tasks: anyio.abc.TaskGroup | None = None

    def _build(self) -> None:
        """Import the SDK and build the server (in a worker thread: it takes about a second)."""
        from mcp.server.transport_security import TransportSecuritySettings

        from memoryd.mcp.server import build_server

        # The SDK's DNS-rebinding check, kept behind the daemon's own and allowing the same names (any port).
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[h for name in self._hosts for h in (name, f"{name}:*")],
            allowed_origins=[o for name in self._hosts for o in (f"http://{name}", f"http://{name}:*")],
        )
        self._server = build_server(self._connect, default_cwd=lambda: None)
        self._app = self._server.streamable_http_app(streamable_http_path=PATH, transport_security=security)

    def _connect(self) -> MemorydClient:
        return MemorydClient(self._base_url, self._token())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if not self._base_url:
            host, port = scope["server"][:2]
            host = "127.0.0.1" if host in ("0.0.0.0", "") else ("::1" if host == "::" else host)
            self._base_url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
        assert self._tasks is not None, "McpEndpoint.running() must wrap the app's lifespan"
        if self._ready is None:  # the first MCP request: build the server and start its session manager
            self._ready = anyio.Event()
            self._tasks.start_soon(self._serve)
        await self._ready.wait()
        if self._app is None:
            down = {
                "error": {
                    "code": "mcp_unavailable",
                    "message": "the MCP endpoint failed to start; see the daemon's log, or use `memoryd mcp` (stdio).",
                }
            }
            await JSONResponse(down, status_code=503)(scope, receive, send)
            return
        await self._app(scope, receive, send)

    @property
    def route(self) -> Route:
        return Route(PATH, endpoint=self)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold the task group the server's session manager runs in, once a request starts it, as long as the app."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                yield
            finally:
                self._tasks = None
                tasks.cancel_scope.cancel()

    async def _serve(self) -> None:
        assert self._ready is not None
        try:
            await anyio.to_thread.run_sync(self._build)
        except Exception:  # the REST API must live on without /mcp
            log.exception("the MCP endpoint could not start")
            self._app = None
            self._ready.set()
            return
        assert self._server is not None
        async with self._server.session_manager.run():
            self._ready.set()
            await anyio.sleep_forever()
