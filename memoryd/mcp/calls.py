"""How the MCP tools reach the daemon: a fresh client per call, off the event loop, its errors turned into tool
(or resource) errors with the fix named for MCP; and which project a call acts on."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlparse
from urllib.request import url2pathname

import anyio.to_thread
import httpx
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ListRootsResult

from memoryd.base.errors import ApiError, DaemonNotRunning
from memoryd.client import MemorydClient
from memoryd.integrations.hook_protocol import RECALL_OFF_NOTE

# The daemon's fixes name its REST API and CLI; over MCP the tool that helps is named too.
MCP_FIXES = {
    "memory_not_found": "memory_search lists this project's memories.",
    "invalid_filename": "memory_search lists this project's memories.",
    "unauthorized": "memoryd mcp reads the token from $MEMORYD_HOME/token: start it with the daemon's MEMORYD_HOME "
    "(`memoryd mcp --print-config CLIENT` writes it into the client's config).",
}

Connect = Callable[[], MemorydClient]
T = TypeVar("T")


def root_path(roots: ListRootsResult | None) -> str | None:
    """The first `file://` root as a local path."""
    for root in roots.roots if roots else []:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            return url2pathname(uri.path)
    return None


class ToolCalls:
    """What every tool needs: the project it acts on and a fresh client of the daemon per call. `recall_off`
    (MEMORYD_RECALL=off in the agent's environment): no tool, resource or prompt hands out a memory."""

    def __init__(self, connect: Connect, default_cwd: Callable[[], str | None], *, recall_off: bool = False) -> None:
        self.connect = connect
        self.default_cwd = default_cwd
        self.recall_off = recall_off

    def check_serving(self) -> None:
        """Refuse a call that would hand out memories while recall is off for this agent (issue 52)."""
        if self.recall_off:
            raise ToolError(f"{RECALL_OFF_NOTE} Unset MEMORYD_RECALL to read memories here. [recall_off]")

    def project(self, roots: ListRootsResult | None, cwd: str | None) -> str:
        found = root_path(roots) or cwd or self.default_cwd()
        if not found:
            raise ToolError(
                "no project: this client shares no workspace roots; pass `cwd`, the absolute path of the project "
                "directory."
            )
        return found

    async def __call__(self, fn: Callable[[MemorydClient], T]) -> T:
        return await daemon_call(self.connect, fn)


async def daemon_call(connect: Connect, fn: Callable[[MemorydClient], T]) -> T:
    """Run `fn` with a fresh client off the event loop; the daemon's errors become tool errors
    carrying its message and fix, never a stack trace."""

    def run() -> T:
        with connect() as client:
            return fn(client)

    try:
        return await anyio.to_thread.run_sync(run)
    except DaemonNotRunning as exc:
        raise ToolError(str(exc)) from None
    except ApiError as exc:
        fix = f" Over MCP: {MCP_FIXES[exc.code]}" if exc.code in MCP_FIXES else ""
        raise ToolError(f"{exc.message} [{exc.code}]{fix}") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"memoryd did not answer ({exc.__class__.__name__}); check it with `memoryd status`.") from None


async def resource_call(connect: Connect, fn: Callable[[MemorydClient], T]) -> T:
    """`daemon_call` for resources: the same messages, as resource errors."""
    try:
        return await daemon_call(connect, fn)
    except ToolError as exc:
        raise ResourceError(str(exc)) from None
