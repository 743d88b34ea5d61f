"""POST /v1/recall: the memories for one prompt of one session (spec §2, §9)."""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.api.deps import RecallDep, StoresDep
from memoryd.api.models import RecallOut, RecallRequest

router = APIRouter(tags=["recall"])


@router.post("/v1/recall", response_model_exclude_none=True)
def recall(request: RecallRequest, recall: RecallDep, stores: StoresDep) -> RecallOut:
    """Up to 5 memories not yet surfaced in this session, and the text to inject."""
    store = stores.for_cwd(request.cwd)
    return RecallOut.model_validate(recall.recall(request.cwd, request.query, request.session_id, store=store).as_dict())
