"""`McpEndpoint`: the MCP server over streamable HTTP at /mcp on the daemon.

The daemon's GuardMiddleware checks the bearer token before a request gets here. Tools call the
daemon's REST API on the address the request came in on (from a worker thread, so the event loop
stays free), so HTTP and stdio share one code path and every write takes the one write path.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from memoryd.client import MemorydClient
from memoryd.mcp.server import build_server

PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
# The SDK's DNS-rebinding check, kept behind the daemon's own: loopback Host (any port) and Origin only.
SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=[h for name in LOOPBACK for h in (name, f"{name}:*")],
    allowed_origins=[o for name in LOOPBACK for o in (f"http://{name}", f"http://{name}:*")],
)

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


class McpEndpoint:
    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token
        self._base_url = ""
        self.server = build_server(self._connect, default_cwd=lambda: None)
        self._app: ASGIApp = self.server.streamable_http_app(streamable_http_path=PATH, transport_security=SECURITY)

    def _connect(self) -> MemorydClient:
        return MemorydClient(self._base_url, self._token())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if not self._base_url:
            host, port = scope["server"][:2]
            host = "127.0.0.1" if host in ("0.0.0.0", "") else ("::1" if host == "::" else host)
            self._base_url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
        await self._app(scope, receive, send)

    @property
    def route(self) -> Route:
        return Route(PATH, endpoint=self)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group; lives as long as the app."""
        async with self.server.session_manager.run():
            yield
