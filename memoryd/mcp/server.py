"""`build_server`: memoryd as an MCP server, a thin client of the daemon's REST API, so every
write takes the daemon's one write path (secret refusal, locking, index, metrics).

The same server runs over stdio (`memoryd mcp`) and over streamable HTTP at /mcp on the daemon.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlparse
from urllib.request import url2pathname

import anyio.to_thread
import httpx
from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ListRootsResult, Resource, ToolAnnotations
from pydantic import Field, ValidationError

from memoryd import __version__
from memoryd.base import limits
from memoryd.base.errors import ApiError, DaemonNotRunning, field_problems
from memoryd.client import MemorydClient
from memoryd.store.frontmatter import render_frontmatter
from memoryd.store.prompt import MEMORY_TYPES_TEXT, WHAT_NOT_TO_SAVE

SERVER_NAME = "memoryd"
SEARCH_DEFAULT_LIMIT = 20  # one page of memory_search; the REST API caps a page at limits.MEMORY_PAGE_MAX
INDEX_URI = f"memory://{limits.INDEX_FILENAME}"

INSTRUCTIONS = (
    "memoryd keeps this project's persistent memory: Markdown notes that outlive the session. "
    "Before a task, call memory_recall with the task to get what earlier sessions learned. "
    "When you learn something that cannot be derived from the code (the user's preferences, a correction, "
    "a decision and why, where an external dashboard lives), save it with memory_save. "
    "Never save secrets: memoryd refuses them."
)

# The daemon's fixes name its REST API and CLI; over MCP the tool that helps is named too.
MCP_FIXES = {
    "memory_not_found": "memory_search lists this project's memories.",
    "invalid_filename": "memory_search lists this project's memories.",
    "unauthorized": "memoryd mcp reads the token from $MEMORYD_HOME/token: start it with the daemon's MEMORYD_HOME "
    "(`memoryd mcp --print-config CLIENT` writes it into the client's config).",
}

Connect = Callable[[], MemorydClient]
T = TypeVar("T")
MemoryType = Literal[limits.MEMORY_TYPES]  # type: ignore[valid-type]  # the JSON schema's enum


def _client_roots(ctx: Context) -> ListRoots | None:
    """Ask for the client's roots when it can answer (a resolver: the SDK sends roots/list)."""
    caps = ctx.client_capabilities
    return ListRoots() if caps is not None and caps.roots is not None else None


Roots = Annotated[ListRootsResult | None, Resolve(_client_roots)]
Cwd = Annotated[
    str | None,
    Field(
        description="Absolute path of the project directory. "
        "Only needed when the client does not share its workspace roots.",
    ),
]
Filename = Annotated[
    str, Field(description="The memory's file name, `<type>_<slug>.md`, as memory_search or memory_recall return it.")
]


ScopeArg = Annotated[
    Literal["project", "global"],
    Field(
        description="`project` (default): this project's memories. "
        "`global`: the user's own, listed and recalled in every project "
        "(who they are, how they like to work); never shared with a team."
    ),
]


def root_path(roots: ListRootsResult | None) -> str | None:
    """The first `file://` root as a local path."""
    for root in roots.roots if roots else []:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            return url2pathname(uri.path)
    return None


# Tool descriptions longer than a line: the exact text agents have always been shown (docstrings are sent as they
# are written, indentation included).
_INDENT = "\n        "
SAVE_DESCRIPTION = (
    "Save (or update) a memory for this project (or, with scope `global`, for every project) so later sessions, "
    "and other agents, know it.\n"
    + _INDENT
    + "Save what cannot be derived from the code or git history: who the user is and how they like to work,"
    + _INDENT
    + "corrections and confirmed approaches, decisions with their reasons, pointers to external systems."
    + _INDENT
    + "Do not save code structure, debugging recipes or anything secret (keys, tokens, passwords are refused)."
)
SEARCH_DESCRIPTION = (
    "Search this project's memories by words (or with scope `global` the user's own), newest first: file name, "
    "type, name and description, a page at a time.\n"
    + _INDENT
    + "Without query or type it lists them all; read a whole memory with memory_show."
)
FORGET_DESCRIPTION = (
    "Delete one memory that is wrong or no longer true. Prefer memory_save with the same type and name to correct it."
)
INDEX_DESCRIPTION = (
    "This project's MEMORY.md as agents load it at session start: one line per memory (truncated at 200 lines / 25 KB)."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class _Calls:
    """What every tool needs: the project it acts on and a fresh client of the daemon per call."""

    def __init__(self, connect: Connect, default_cwd: Callable[[], str | None]) -> None:
        self.connect = connect
        self.default_cwd = default_cwd

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


def build_server(connect: Connect, *, default_cwd: Callable[[], str | None]) -> MCPServer:
    """The MCP server; `connect` makes a client of the daemon for each call, `default_cwd` is the
    project when neither the client's roots nor a `cwd` argument name one (None over HTTP)."""
    server = _MemorydServer(connect, default_cwd)
    calls = _Calls(connect, default_cwd)
    _add_save_tool(server, calls)
    _add_recall_tools(server, calls)
    _add_read_tools(server, calls)
    _add_resource_and_prompt(server, calls)
    return server


def _add_save_tool(server: MCPServer, calls: _Calls) -> None:
    """memory_save: a write through the daemon's one write path."""

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
        description=SAVE_DESCRIPTION,
    )
    async def memory_save(
        type: Annotated[
            MemoryType,
            Field(
                description=(
                    "user: the user's role, goals, knowledge, preferences. "
                    "feedback: a correction or confirmation of how to work. "
                    "project: ongoing work, decisions, deadlines, incidents. "
                    "reference: a pointer to an external system."
                )
            ),
        ],
        name: Annotated[
            str,
            Field(
                description="Short title. "
                "Saving the same type and name again updates that memory instead of adding one."
            ),
        ],
        description: Annotated[
            str,
            Field(description="One specific line saying what the memory is about; recall decides relevance from it."),
        ],
        body: Annotated[
            str,
            Field(
                description=(
                    "The memory in Markdown. "
                    "For feedback and project memories add a **Why:** line and a **How to apply:** line; "
                    "write dates as absolute dates (2026-03-05)."
                )
            ),
        ],
        roots: Roots,
        cwd: Cwd = None,
        scope: ScopeArg = "project",
    ) -> dict[str, Any]:
        where = calls.project(roots, cwd)
        result = await calls(
            lambda c: c.save_memory(where, name=name, description=description, type_=type, body=body, scope=scope)
        )
        return {"filename": result["filename"], "path": result["path"], "created": result["created"]}


def _add_recall_tools(server: MCPServer, calls: _Calls) -> None:
    """memory_recall (the memories for a task) and memory_search (by words, a page at a time)."""

    @server.tool(annotations=READ_ONLY)
    async def memory_recall(
        query: Annotated[
            str, Field(description="The task or question, in plain words (for example the user's request).")
        ],
        roots: Roots,
        cwd: Cwd = None,
    ) -> dict[str, Any]:
        """Recall up to 5 memories relevant to a task, with their full text and why each was picked.

        Call it at the start of a task, or when the user refers to something from an earlier session."""
        where = calls.project(roots, cwd)
        # Each call is its own recall session, so it never hides a memory an earlier call returned.
        data = await calls(lambda c: c.recall(where, query, session_id=f"mcp-{uuid.uuid4().hex[:12]}", source="mcp"))
        return recalled(data)

    @server.tool(annotations=READ_ONLY, description=SEARCH_DESCRIPTION)
    async def memory_search(
        roots: Roots,
        query: Annotated[
            str | None,
            Field(
                description="Only memories whose file name, name or description contain every word of this "
                "(case-insensitive), e.g. `pnpm lockfile`."
            ),
        ] = None,
        text: Annotated[str | None, Field(description="The same as query (the name older clients send).")] = None,
        type: Annotated[MemoryType | None, Field(description="Only memories of this type.")] = None,
        offset: Annotated[
            int,
            Field(
                ge=0, description="Skip this many matches; pass the previous answer's next_offset to get the next page."
            ),
        ] = 0,
        limit: Annotated[
            int, Field(ge=1, le=limits.MEMORY_PAGE_MAX, description="Matches per page.")
        ] = SEARCH_DEFAULT_LIMIT,
        cwd: Cwd = None,
        scope: ScopeArg = "project",
    ) -> dict[str, Any]:
        where = calls.project(roots, cwd)
        words = " ".join(w for w in (query, text) if w and w.strip())
        params: dict[str, Any] = (
            {"cwd": where, "offset": offset, "limit": limit}
            | ({"q": words} if words else {})
            | ({"type": type} if type else {})
            | ({"scope": scope} if scope != "project" else {})
        )
        data = await calls(lambda c: c.request("GET", "/v1/memories", params=params))
        end = offset + len(data["memories"])
        return {
            "memories": [{k: m[k] for k in ("filename", "type", "name", "description")} for m in data["memories"]],
            "total": data["total"],
            "next_offset": end if end < data["total"] else None,
        }


def recalled(data: dict[str, Any]) -> dict[str, Any]:
    """memory_recall's answer from POST /v1/recall's: each memory with why it was picked."""
    scores = data.get("scores") or {}
    why = f"picked by the {data['method']} ranker" + (f" ({data['reason']})" if data.get("reason") else "")
    memories = [
        {
            "filename": m["filename"],
            "name": m["name"],
            "type": m["type"],
            "description": m["description"],
            "age_days": m["age_days"],
            "why": why + (f", score {scores[m['filename']]:.2f}" if m["filename"] in scores else ""),
            "content": m["content"],
            # team, or global: the user's own, every project
            **({"origin": m["origin"]} if m.get("origin") else {}),
        }
        for m in data["memories"]
    ]
    return {"memories": memories, "method": data["method"], "note": data.get("reason") or ""}


def _add_read_tools(server: MCPServer, calls: _Calls) -> None:
    """memory_show, memory_forget, memory_index and dream_status: one memory, the index and consolidation."""

    @server.tool(annotations=READ_ONLY)
    async def memory_show(
        filename: Filename, roots: Roots, cwd: Cwd = None, scope: ScopeArg = "project"
    ) -> dict[str, Any]:
        """Read one whole memory: name, description, type, body, and when it was created and last modified."""
        where = calls.project(roots, cwd)
        memory = await calls(lambda c: c.get_memory(where, filename, scope=scope))
        return {k: memory[k] for k in ("filename", "name", "description", "type", "body", "created", "modified")}

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
        description=FORGET_DESCRIPTION,
    )
    async def memory_forget(
        filename: Filename, roots: Roots, cwd: Cwd = None, scope: ScopeArg = "project"
    ) -> dict[str, Any]:
        where = calls.project(roots, cwd)
        await calls(lambda c: c.delete_memory(where, filename, scope=scope))
        return {"deleted": filename}

    @server.tool(annotations=READ_ONLY, description=INDEX_DESCRIPTION)
    async def memory_index(roots: Roots, cwd: Cwd = None) -> dict[str, Any]:
        where = calls.project(roots, cwd)
        data = await calls(lambda c: c.index(where))
        return {"memory_dir": data["memory_dir"], "content": data["content"], "truncated": data["truncated"]}

    @server.tool(annotations=READ_ONLY)
    async def dream_status(roots: Roots, cwd: Cwd = None) -> dict[str, Any]:
        """Status of memoryd's background consolidation ("dream") for this project: each gate and whether it
        passes, the last run and what it changed, a running consolidation, and the next check."""
        where = calls.project(roots, cwd)
        status: dict[str, Any] = await calls(lambda c: c.request("GET", "/v1/dream/status", params={"cwd": where}))
        return status


def _add_resource_and_prompt(server: MCPServer, calls: _Calls) -> None:
    """MEMORY.md and each memory file of the default project (or ?cwd=) as resources; the memory instructions
    as a prompt, for agents that lack them."""
    connect, default_cwd = calls.connect, calls.default_cwd

    @server.resource(
        "memory://{filename}{?cwd}",
        name="memory",
        mime_type="text/markdown",
        description=f"A memory file (`<type>_<slug>.md`), or {limits.INDEX_FILENAME} for the index; "
        "add ?cwd=<project dir> when the server has no default project.",
        security=ResourceSecurity(exempt_params=frozenset({"cwd"})),  # an absolute path by design; the daemon checks it
    )
    async def memory_file(filename: str, cwd: str | None = None) -> str:
        where = cwd or default_cwd()
        if not where:
            raise ResourceError(f"no project: read memory://{filename}?cwd=<absolute project dir>.")
        if filename == limits.INDEX_FILENAME:
            return str((await resource_call(connect, lambda c: c.index(where)))["content"])
        m = await resource_call(connect, lambda c: c.get_memory(where, filename))
        return render_frontmatter({"name": m["name"], "description": m["description"], "type": m["type"]}, m["body"])

    @server.prompt(name="memory_instructions", title="memoryd memory instructions")
    async def memory_instructions(cwd: str | None = None) -> str:
        """How to use this project's memory (types, when to save, what not to save), with the current index."""
        where = cwd or default_cwd()
        index = "(Pass the project directory as `cwd` to include this project's index.)"
        if where:
            content = str((await daemon_call(connect, lambda c: c.index(where)))["content"]).rstrip()
            index = content or "(No memories saved yet.)"
        return instructions_text(index)


def instructions_text(index: str) -> str:
    """The seeds' memory instructions, with saving done through the MCP tools instead of files."""
    return f"""# Memory

You have a persistent memory for this project, kept by memoryd. It survives compaction and sessions, and
other agents working in this project share it. Only remember what cannot be derived from the current project state.

{MEMORY_TYPES_TEXT}

## How to use it
- At the start of a task, call `memory_recall` with the task; read a whole memory with `memory_show`.
- Save with `memory_save` (type, name, description, body): one memory per fact, a specific one-line description.
  The same type and name updates that memory: update rather than add a near-duplicate.
- Remove a memory that is wrong with `memory_forget`; browse them with `memory_search`.

{WHAT_NOT_TO_SAVE}

## Current memory index (MEMORY.md)
{index}
"""


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


class _MemorydServer(MCPServer):
    """MCPServer whose resource list also names each memory file of the default project."""

    def __init__(self, connect: Connect, default_cwd: Callable[[], str | None]) -> None:
        super().__init__(
            SERVER_NAME, title="memoryd", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
        )
        self.connect = connect
        self.default_cwd = default_cwd

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
        if not where:
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
