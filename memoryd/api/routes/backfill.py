"""POST /v1/backfill (mine existing transcripts) and GET /v1/backfill (progress)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import Field

from memoryd.api.deps import BackfillDep
from memoryd.api.models import RequestModel, ResponseModel

router = APIRouter(tags=["extraction"])


class BackfillRequest(RequestModel):
    since_days: float = Field(30.0, gt=0, le=3650, description="Only transcripts touched in the last N days.")
    cwd: str | None = Field(
        None, description="Only this project's transcripts (any directory inside it); all projects when absent."
    )


class BackfillStarted(ResponseModel):
    transcripts: int = Field(description="Main-session transcripts in the window.")
    sessions: int = Field(description="Of them, sessions with a known working directory.")
    jobs_queued: int = Field(description="Extraction jobs queued (sessions with turns not mined yet).")
    skipped: int = Field(description="Transcripts with no usable working directory.")
    since_days: float
    project: str | None = Field(description="The project root when one was named.")


class BackfillProgress(ResponseModel):
    queued: int
    running: int
    done: int
    skipped: int
    failed: int
    total: int = Field(description="Backfill jobs in the job table (finished ones are pruned after 30 days).")
    finished: int
    active: bool = Field(description="True while a backfill job is queued or running.")


@router.post("/v1/backfill", status_code=202)
def start_backfill(request: BackfillRequest, backfill: BackfillDep) -> BackfillStarted:
    """Bring matching transcripts up to date and queue one paced extraction job per session with unmined turns."""
    return BackfillStarted.model_validate(backfill.start(since_days=request.since_days, cwd=request.cwd))


@router.get("/v1/backfill")
def backfill_progress(backfill: BackfillDep) -> BackfillProgress:
    return BackfillProgress.model_validate(backfill.progress())
