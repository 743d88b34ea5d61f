"""Auto-Dream over HTTP: status, forced run, cancel, past runs, undo."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from memoryd.api.deps import DaemonDep

router = APIRouter(tags=["dream"])


class CwdBody(BaseModel):
    model_config = ConfigDict(extra="ignore")
    cwd: str = Field(..., description="The agent's working directory; names the project.")


@router.get("/v1/dream/status")
def dream_status(daemon: DaemonDep, cwd: str = Query(...)) -> dict[str, Any]:
    """Each gate with its value and whether it passes, last run, running task, next check."""
    return daemon.dream.status(cwd)


@router.post("/v1/dream/run", status_code=202)
def dream_run(body: CwdBody, daemon: DaemonDep) -> dict[str, str]:
    """Consolidate now: gates 1–3 skipped, never the lock (409 when held)."""
    return {"run_id": daemon.dream.run(body.cwd, force=True)}


@router.post("/v1/dream/cancel")
def dream_cancel(body: CwdBody, daemon: DaemonDep) -> dict[str, Any]:
    return daemon.dream.cancel(body.cwd)


@router.get("/v1/dream/runs")
def dream_runs(daemon: DaemonDep, cwd: str = Query(...)) -> dict[str, Any]:
    return {"runs": daemon.dream.runs(cwd)}


@router.post("/v1/dream/runs/{run_id}/undo")
def dream_undo(run_id: str, daemon: DaemonDep) -> dict[str, Any]:
    return daemon.dream.undo(run_id)
