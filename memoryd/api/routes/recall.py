"""POST /v1/recall: the memories for one prompt of one session (spec §2, §9)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from memoryd.api.deps import DaemonDep

router = APIRouter(tags=["recall"])


class RecallRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cwd: str = Field(..., description="The agent's working directory; names the project.")
    query: str = Field(..., description="The user's prompt.")
    session_id: str = Field(..., min_length=1, description="The agent's session id; a session never gets the same memory twice.")


@router.post("/v1/recall")
def recall(request: RecallRequest, daemon: DaemonDep) -> dict[str, Any]:
    """Up to 5 memories not yet surfaced in this session, and the text to inject."""
    store = daemon.store_for(request.cwd)
    return daemon.recall.recall(request.cwd, request.query, request.session_id, store=store).as_dict()
