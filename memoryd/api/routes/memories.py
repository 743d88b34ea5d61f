"""The memory store over HTTP: index, prompt, and CRUD on topic files."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from memoryd.api.deps import StoresDep
from memoryd.api.models import (
    CwdQuery,
    IndexOut,
    MemoryListOut,
    MemoryOut,
    PromptOut,
    SavedMemoryOut,
    SaveMemoryRequest,
    Scope,
)
from memoryd.api.openapi import errors
from memoryd.base import limits
from memoryd.guard.propose import save_forbid, will_stop
from memoryd.recall.applies_index import reached
from memoryd.store.prompt import build_memory_prompt

router = APIRouter(tags=["memories"])
ScopeQuery = Annotated[
    Scope,
    Query(description="`project` (default): this project's memories; `global`: the user's own, in every project."),
]


@router.get("/v1/index")
def get_index(stores: StoresDep, cwd: CwdQuery) -> IndexOut:
    """MEMORY.md as served: truncated at 200 lines / 25,000 bytes, with the fix-it warning."""
    store = stores.for_cwd(cwd)
    served = store.served_index()
    return IndexOut(
        memory_dir=str(store.path),
        content=served.content,
        truncated=served.truncated,
        lines=served.lines,
        bytes=served.bytes,
    )


@router.get("/v1/prompt")
def get_prompt(stores: StoresDep, cwd: CwdQuery) -> PromptOut:
    """The memory section for a system prompt: types, how to save, what not to save, the index."""
    store = stores.for_cwd(cwd)
    return PromptOut(text=build_memory_prompt(store.path, store.served_index(), store.dialect()))


@router.get("/v1/memories")
def list_memories(
    stores: StoresDep,
    cwd: CwdQuery,
    type: Annotated[str | None, Query(description="Only this type.")] = None,
    q: Annotated[
        str | None,
        Query(
            description="Only memories whose filename, name or description hold every word of this text "
            "(case-insensitive)."
        ),
    ] = None,
    offset: Annotated[
        int, Query(ge=0, description="Skip this many matches (pass the previous page's next_offset).")
    ] = 0,
    limit: Annotated[
        int, Query(ge=1, le=limits.LIST_PAGE_MAX, description=f"Memories per page, 1..{limits.LIST_PAGE_MAX}.")
    ] = limits.LIST_PAGE_DEFAULT,
    scope: ScopeQuery = "project",
) -> MemoryListOut:
    """The memories (or those matching `q`), newest first, one page at a time (`next_offset` is null
    on the last page); hand-edited files that do not parse are listed under `invalid`."""
    store = stores.for_scope(cwd, scope)
    headers = store.list(type)
    if q:  # every word, anywhere: "pnpm lockfile" finds the memory that says both, in any order
        words = q.casefold().split()
        headers = [h for h in headers if all(w in f"{h.filename}\n{h.name}\n{h.description}".casefold() for w in words)]
    page = headers[offset : offset + limit]
    next_offset = offset + len(page) if offset + len(page) < len(headers) else None
    return MemoryListOut.model_validate(
        {
            "memories": page,
            "total": len(headers),
            "offset": offset,
            "next_offset": next_offset,
            "invalid": store.invalid_files(),
        }
    )


@router.get("/v1/memories/{filename}", responses=errors(404))
def get_memory(filename: str, stores: StoresDep, cwd: CwdQuery, scope: ScopeQuery = "project") -> MemoryOut:
    """One memory file, frontmatter fields and body."""
    return MemoryOut.model_validate(stores.for_scope(cwd, scope).get(filename))


@router.post(
    "/v1/memories",
    status_code=201,
    responses={200: {"model": SavedMemoryOut, "description": "The same type+name existed: that memory was updated."}},
)
def save_memory(request: SaveMemoryRequest, response: Response, stores: StoresDep) -> SavedMemoryOut:
    """Create a memory (201); the same type+name again updates that file (200); `scope: global`
    keeps it in the user's own store, listed and recalled in every project."""
    store = stores.for_scope(request.cwd, request.scope)
    forbid, proposing = save_forbid(request.name, request.description, request.body, request.forbid)
    result = store.save(
        name=request.name,
        description=request.description,
        type=request.type,
        body=request.body,
        source="api",
        expected=request.expected_version,
        only_new=request.only_new,
        applies_to=request.applies_to.model_dump() if request.applies_to is not None else None,
        forbid=forbid,
        forbid_if_absent=proposing,
    )
    if not result.created:
        response.status_code = 200
    m = result.memory
    return SavedMemoryOut.of(
        m,
        path=str(m.path),
        created=result.created,
        reaches=reached(m),
        will_stop=will_stop(m.forbid),
        forbid_proposed=proposing and m.forbid == forbid,
    )


@router.delete(
    "/v1/memories/{filename}",
    status_code=204,
    response_class=Response,
    responses={204: {"description": "Deleted; no body."}, **errors(404, 409)},
)
def delete_memory(
    filename: str,
    stores: StoresDep,
    cwd: CwdQuery,
    expected_version: Annotated[
        str | None, Query(description="The `version` you read; 409 when the file changed since (an If-Match).")
    ] = None,
    scope: ScopeQuery = "project",
) -> Response:
    """Delete one memory file and its index line."""
    stores.for_scope(cwd, scope).delete(filename, source="api", expected=expected_version)
    return Response(status_code=204)
