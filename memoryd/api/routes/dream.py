"""Auto-Dream over HTTP: status, forced run, cancel, past runs, undo."""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.api.deps import DreamDep
from memoryd.api.dream_models import CancelOut, CwdRequest, DreamStatusOut, RunOut, RunsOut, RunStartedOut, UndoOut
from memoryd.api.models import CwdQuery
from memoryd.api.openapi import errors

router = APIRouter(tags=["dream"])


@router.get("/v1/dream/status")
def dream_status(dream: DreamDep, cwd: CwdQuery) -> DreamStatusOut:
    """Each gate with its value and whether it passes, last run, running task, next check."""
    return DreamStatusOut.model_validate(dream.status(cwd))


@router.post("/v1/dream/run", status_code=202, responses=errors(409))
def dream_run(body: CwdRequest, dream: DreamDep) -> RunStartedOut:
    """Consolidate now: gates 1–3 skipped, never the lock (409 when held)."""
    return RunStartedOut(run_id=dream.run(body.cwd, force=True))


@router.post("/v1/dream/cancel")
def dream_cancel(body: CwdRequest, dream: DreamDep) -> CancelOut:
    """Cancel the project's running consolidation; its changes are rolled back."""
    return CancelOut.model_validate(dream.cancel(body.cwd))


@router.get("/v1/dream/runs")
def dream_runs(dream: DreamDep, cwd: CwdQuery) -> RunsOut:
    """The project's past consolidation runs, newest first."""
    return RunsOut(runs=[RunOut.model_validate(run) for run in dream.runs(cwd)])


@router.post("/v1/dream/runs/{run_id}/undo", responses=errors(404, 409))
def dream_undo(run_id: str, dream: DreamDep) -> UndoOut:
    """Put every file the run touched back as it was."""
    return UndoOut.model_validate(dream.undo(run_id))
