"""Turn-end events and the jobs they start."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from memoryd.api.deps import DaemonDep

router = APIRouter(tags=["extraction"])


class TurnEndRequest(BaseModel):
    """Our body, or Claude Code's Stop hook JSON as is (extra keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    session_id: str = Field(..., description="The agent's session id.")
    transcript_path: str = Field(..., description="Absolute path of the session transcript (under a configured root).")
    cwd: str = Field(..., description="The agent's working directory; names the project.")
    last_assistant_message: str | None = Field(None, description="Claude Code's Stop hook field; may be newer than the transcript.")


@router.post("/v1/events/turn-end", status_code=202)
def turn_end(event: TurnEndRequest, daemon: DaemonDep) -> dict[str, str]:
    """Queue extraction for the turn that just ended; answers at once with the job id."""
    job_id = daemon.turn_end(event.session_id, event.transcript_path, event.cwd, event.last_assistant_message)
    return {"job_id": job_id}


@router.get("/v1/jobs/{job_id}")
def get_job(job_id: str, daemon: DaemonDep) -> dict[str, Any]:
    return daemon.extraction.get_job(job_id)
