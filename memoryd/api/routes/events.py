"""Turn-end events and the jobs they start."""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.api.deps import ExtractionDep, TurnsDep
from memoryd.api.models import JobOut, JobQueuedOut, TurnEndRequest
from memoryd.api.openapi import errors

router = APIRouter(tags=["extraction"])


@router.post("/v1/events/turn-end", status_code=202, responses=errors(503))
def turn_end(event: TurnEndRequest, turns: TurnsDep) -> JobQueuedOut:
    """Queue extraction for the turn that just ended; answers at once with the job id."""
    return JobQueuedOut(
        job_id=turns.turn_end(event.session_id, event.transcript_path, event.cwd, event.last_assistant_message)
    )


@router.get("/v1/jobs/{job_id}", responses=errors(404))
def get_job(job_id: str, extraction: ExtractionDep) -> JobOut:
    """An extraction job: status, memories written, candidates refused and why."""
    return JobOut.model_validate(extraction.get_job(job_id))
