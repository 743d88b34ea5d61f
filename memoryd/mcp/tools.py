"""The MCP server's tools, resource and prompt: each a thin call of the daemon's REST API (`ToolCalls`)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import ListRootsResult, ToolAnnotations
from pydantic import Field

from memoryd.base import limits
from memoryd.integrations.hook_protocol import RECALL_OFF_NOTE
from memoryd.mcp.calls import ToolCalls, daemon_call, resource_call
from memoryd.store.frontmatter import render_frontmatter
from memoryd.store.prompt import MEMORY_TYPES_TEXT, WHAT_NOT_TO_SAVE

SEARCH_DEFAULT_LIMIT = 20  # one page of memory_search; the REST API caps a page at limits.MEMORY_PAGE_MAX
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


def add_tools(server: MCPServer, calls: ToolCalls) -> None:
    """Every tool (in the order clients list them), the memory resource and the instructions prompt."""
    _add_save_tool(server, calls)
    _add_recall_tools(server, calls)
    _add_read_tools(server, calls)
    _add_resource_and_prompt(server, calls)


def _add_save_tool(server: MCPServer, calls: ToolCalls) -> None:
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
        roots: Roots,
        body: Annotated[
            str,
            Field(
                description=(
                    "The memory in Markdown (optional, as for `memoryd save` and the REST API). "
                    "For feedback and project memories add a **Why:** line and a **How to apply:** line; "
                    "write dates as absolute dates (2026-03-05)."
                )
            ),
        ] = "",
        cwd: Cwd = None,
        scope: ScopeArg = "project",
        applies_to: Annotated[
            dict[str, list[str]] | None,
            Field(
                description=(
                    'Optional: where the memory applies, e.g. {"paths": ["db/migrations/**"], "commands": ["npm"], '
                    '"tools": ["Bash"]}; recall then brings it when a command or an edit meets one of them.'
                )
            ),
        ] = None,
    ) -> dict[str, Any]:
        where = calls.project(roots, cwd)
        result = await calls(
            lambda c: c.save_memory(
                where, name=name, description=description, type_=type, body=body, scope=scope, applies_to=applies_to
            )
        )
        answer = {"filename": result["filename"], "path": result["path"], "created": result["created"]}
        if result.get("will_stop"):  # what the guard now holds, as `memoryd save` prints it
            answer["will_stop"] = result["will_stop"]
        return answer


def _add_recall_tools(server: MCPServer, calls: ToolCalls) -> None:
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
        calls.check_serving()
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
        calls.check_serving()
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
            "why": why + (f", score {scores[m['filename']]:.2f}" if scores.get(m["filename"]) else ""),
            "content": m["content"],
            # team, or global: the user's own, every project
            **({"origin": m["origin"]} if m.get("origin") else {}),
        }
        for m in data["memories"]
    ]
    return {"memories": memories, "method": data["method"], "note": data.get("reason") or ""}


def _add_read_tools(server: MCPServer, calls: ToolCalls) -> None:
    """memory_show, memory_forget, memory_index and dream_status: one memory, the index and consolidation."""

    @server.tool(annotations=READ_ONLY)
    async def memory_show(
        filename: Filename, roots: Roots, cwd: Cwd = None, scope: ScopeArg = "project"
    ) -> dict[str, Any]:
        """Read one whole memory: name, description, type, body, and when it was created and last modified."""
        calls.check_serving()
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
        calls.check_serving()
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


def _add_resource_and_prompt(server: MCPServer, calls: ToolCalls) -> None:
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
        if calls.recall_off:
            raise ResourceError(RECALL_OFF_NOTE)
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
        if calls.recall_off:
            index = f"({RECALL_OFF_NOTE})"
        elif where:
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
