"""The memory store over HTTP: index, prompt, and CRUD on topic files."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Response

from memoryd import limits
from memoryd.api.deps import DaemonDep
from memoryd.api.models import SaveMemoryRequest
from memoryd.errors import SecretDetected
from memoryd.store.prompt import build_memory_prompt

router = APIRouter(tags=["memories"])
CwdQuery = Query(..., description="The agent's working directory; names the project.")


@router.get("/v1/index")
def get_index(daemon: DaemonDep, cwd: str = CwdQuery) -> dict[str, Any]:
    """MEMORY.md as served: truncated at 200 lines / 25,000 bytes, with the fix-it warning."""
    store = daemon.store_for(cwd)
    served = store.served_index()
    return {"memory_dir": str(store.path), "content": served.content, "truncated": served.truncated, "lines": served.lines, "bytes": served.bytes}


@router.get("/v1/prompt")
def get_prompt(daemon: DaemonDep, cwd: str = CwdQuery) -> dict[str, str]:
    """The memory section for a system prompt: types, how to save, what not to save, the index."""
    store = daemon.store_for(cwd)
    return {"text": build_memory_prompt(store.path, store.served_index())}


@router.get("/v1/memories")
def list_memories(daemon: DaemonDep, cwd: str = CwdQuery, type: str | None = Query(None, description="Only this type."),
                  limit: int = Query(limits.LIST_PAGE_DEFAULT, ge=1, le=limits.LIST_PAGE_MAX, description="Memories per page."),
                  offset: int = Query(0, ge=0, description="Skip this many (pass the previous page's next_offset).")) -> dict[str, Any]:
    """The memories, newest first, one page at a time (`next_offset` is null on the last page);
    hand-edited files that do not parse are listed under `invalid`."""
    store = daemon.store_for(cwd)
    every = store.list(type)
    page = every[offset:offset + limit]
    next_offset = offset + len(page) if offset + len(page) < len(every) else None
    return {"memories": [h.as_dict() for h in page], "invalid": [f.as_dict() for f in store.invalid_files()],
            "total": len(every), "next_offset": next_offset}


@router.get("/v1/memories/{filename}")
def get_memory(filename: str, daemon: DaemonDep, cwd: str = CwdQuery) -> dict[str, Any]:
    return daemon.store_for(cwd).get(filename).as_dict()


@router.post("/v1/memories", status_code=201)
def save_memory(request: SaveMemoryRequest, response: Response, daemon: DaemonDep) -> dict[str, Any]:
    """Create a memory (201); the same type+name again updates that file (200)."""
    store = daemon.store_for(request.cwd)
    try:
        result = store.save(name=request.name, description=request.description, type=request.type, body=request.body)
    except SecretDetected:
        daemon.metrics.secrets_refused.labels("api").inc()
        raise
    daemon.after_write(store)
    daemon.metrics.memories_written.labels("api").inc()
    if not result.created:
        response.status_code = 200
    return {**result.memory.as_dict(), "path": str(result.memory.path), "created": result.created}


@router.delete("/v1/memories/{filename}", status_code=204)
def delete_memory(filename: str, daemon: DaemonDep, cwd: str = CwdQuery) -> Response:
    daemon.store_for(cwd).delete(filename)
    daemon.metrics.memories_deleted.inc()
    return Response(status_code=204)
