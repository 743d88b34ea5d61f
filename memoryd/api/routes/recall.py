"""POST /v1/recall: the memories for one prompt of one session (spec §2, §9); GET /v1/recall/log: what past recalls
gave and why."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memoryd.api.deps import RecallDep, StoresDep
from memoryd.api.models import Cwd, RecallLogOut, RecallOut, RecallRequest, SessionId
from memoryd.base import limits
from memoryd.transcripts.context import SessionContext

router = APIRouter(tags=["recall"])


@router.post("/v1/recall", response_model_exclude_none=True)
def recall(request: RecallRequest, recall: RecallDep, stores: StoresDep) -> RecallOut:
    """Up to 5 memories not yet surfaced in this session, and the text to inject."""
    store = stores.for_cwd(request.cwd)
    return RecallOut.of_result(
        recall.recall(
            request.cwd,
            request.query,
            request.session_id,
            store=store,
            source=request.source,
            context=SessionContext(paths=request.context) if request.context else None,
        )
    )


@router.get("/v1/recall/log")
def recall_log(
    recall: RecallDep,
    stores: StoresDep,
    cwd: Annotated[Cwd | None, Query(description="Only this project's recalls (its working directory).")] = None,
    session: Annotated[SessionId | None, Query(description="Only this session's recalls.")] = None,
    limit: Annotated[
        int, Query(ge=1, le=limits.RECALL_LOG_PER_PROJECT, description="How many, newest first.")
    ] = limits.RECALL_LOG_DEFAULT_LIMIT,
) -> RecallLogOut:
    """The last recalls: the prompt (redacted), the memories given with score and what matched, those just under the
    cut, or why nothing was."""
    memory_dir = str(stores.for_cwd(cwd).path) if cwd else None
    entries = (
        recall.recall_log.entries(memory_dir=memory_dir, session_id=session, limit=limit) if recall.recall_log else []
    )
    return RecallLogOut.model_validate({"entries": entries})
