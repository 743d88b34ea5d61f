"""GET /v1/sessions/{session_id}/memory: a session's rolling notes (spec §5)."""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.api.deps import SessionNotesDep
from memoryd.api.models import SessionId, SessionMemoryOut
from memoryd.api.openapi import errors
from memoryd.base.errors import SessionNotFound

router = APIRouter(tags=["sessions"])


@router.get("/v1/sessions/{session_id}/memory", responses=errors(404))
def session_memory(session_id: SessionId, notes: SessionNotesDep) -> SessionMemoryOut:
    """The session-memory Markdown; 404 when the session has no notes yet."""
    text = notes.get(session_id)
    if text is None:
        raise SessionNotFound(
            f"no session memory for {session_id!r}: notes are written once a session passes "
            f"{notes.settings.init_tokens:,} tokens; check the id, or wait for more turns."
        )
    return SessionMemoryOut(session_id=session_id, markdown=text)
