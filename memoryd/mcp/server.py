"""`build_server`: memoryd as an MCP server, a thin client of the daemon's REST API, so every
write takes the daemon's one write path (secret refusal, locking, index, metrics).

The same server runs over stdio (`memoryd mcp`) and over streamable HTTP at /mcp on the daemon.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import Resource
from pydantic import ValidationError

from memoryd import __version__
from memoryd.base import limits
from memoryd.base.errors import field_problems
from memoryd.mcp.calls import Connect, ToolCalls, daemon_call
from memoryd.mcp.tools import add_tools

SERVER_NAME = "memoryd"
INDEX_URI = f"memory://{limits.INDEX_FILENAME}"

INSTRUCTIONS = (
    "memoryd keeps this project's persistent memory: Markdown notes that outlive the session. "
    "Before a task, call memory_recall with the task to get what earlier sessions learned. "
    "When you learn something that cannot be derived from the code (the user's preferences, a correction, "
    "a decision and why, where an external dashboard lives), save it with memory_save. "
    "Never save secrets: memoryd refuses them."
)


def build_server(connect: Connect, *, default_cwd: Callable[[], str | None], recall_off: bool = False) -> MCPServer:
    """The MCP server; `connect` makes a client of the daemon for each call, `default_cwd` is the
    project when neither the client's roots nor a `cwd` argument name one (None over HTTP); `recall_off`
    (MEMORYD_RECALL=off where the agent started it): it hands out no memory, as the hooks inject none."""
    server = _MemorydServer(connect, default_cwd, recall_off=recall_off)
    add_tools(server, ToolCalls(connect, default_cwd, recall_off=recall_off))
    return server


class _MemorydServer(MCPServer):
    """MCPServer whose resource list also names each memory file of the default project."""

    def __init__(self, connect: Connect, default_cwd: Callable[[], str | None], *, recall_off: bool) -> None:
        super().__init__(
            SERVER_NAME, title="memoryd", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
        )
        self.connect = connect
        self.default_cwd = default_cwd
        self.recall_off = recall_off

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        """Bad arguments get one line naming each field, not pydantic's dump (which echoes the input)."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(
                    f"invalid arguments: {field_problems(exc.__cause__.errors())}. [invalid_arguments]"
                ) from None
            raise

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        where = self.default_cwd()
        if not where or self.recall_off:
            return listed
        connect = self.connect
        try:
            index = await daemon_call(connect, lambda c: c.index(where))
            data = await daemon_call(
                connect,
                lambda c: c.request("GET", "/v1/memories", params={"cwd": where, "limit": limits.MEMORY_PAGE_MAX}),
            )
        except ToolError:
            return listed  # the daemon is down: reading a resource says so, listing stays quiet
        listed.append(
            Resource(
                uri=INDEX_URI,
                name=limits.INDEX_FILENAME,
                description=f"The memory index of {index['memory_dir']}",
                mime_type="text/markdown",
            )
        )
        listed += [
            Resource(
                uri=f"memory://{m['filename']}",
                name=m["filename"],
                title=m["name"],
                description=m["description"],
                mime_type="text/markdown",
            )
            for m in data["memories"]
        ]
        return listed
