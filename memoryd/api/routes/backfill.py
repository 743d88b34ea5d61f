"""POST /v1/backfill (mine existing transcripts) and GET /v1/backfill (progress)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from memoryd.api.deps import DaemonDep

router = APIRouter(tags=["extraction"])


class BackfillRequest(BaseModel):
    since_days: float = Field(30.0, gt=0, le=3650, description="Only transcripts touched in the last N days.")
    cwd: str | None = Field(None, description="Only this project's transcripts (any directory inside it); all projects when absent.")


@router.post("/v1/backfill", status_code=202)
def start_backfill(request: BackfillRequest, daemon: DaemonDep) -> dict[str, Any]:
    return daemon.backfill.start(since_days=request.since_days, cwd=request.cwd)


@router.get("/v1/backfill")
def backfill_progress(daemon: DaemonDep) -> dict[str, Any]:
    return daemon.backfill.progress()
