"""Team memory over HTTP: tie a project's team folder to a git remote, sync, status, and team saves."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from memoryd import limits
from memoryd.api.deps import DaemonDep
from memoryd.api.models import SaveMemoryRequest
from memoryd.errors import SecretDetected

router = APIRouter(tags=["team"])
CwdQuery = Query(..., description="The agent's working directory; names the project.")


class TeamInitRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cwd: str = Field(..., description="The project's directory.")
    remote: str = Field(..., description="A git remote the team can reach: ssh/https URL or a path to a bare repository.")
    branch: str = Field(limits.TEAM_DEFAULT_BRANCH, description="The branch that holds the team's memories.")


class TeamSyncRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cwd: str = Field(..., description="The project's directory.")
    accept_rewrite: bool = Field(False, description="Merge with a remote whose history was rewritten (force-pushed); both versions of any difference are kept.")


@router.post("/v1/team/init")
def team_init(request: TeamInitRequest, daemon: DaemonDep) -> dict[str, Any]:
    """Tie the project's `memory/team/` to a git remote and run the first sync (`sync_error` when it failed; it is retried)."""
    repo, report, error = daemon.team.init(request.cwd, request.remote, request.branch)
    return {**repo.status(), "sync": report.as_dict() if report else None, "sync_error": error}


@router.post("/v1/team/sync")
def team_sync(request: TeamSyncRequest, daemon: DaemonDep) -> dict[str, Any]:
    """Pull, merge, push now; what was pulled, pushed, merged, kept for review or held back, by file."""
    repo = daemon.team.repo_for(request.cwd)
    return {**repo.sync(accept_rewrite=request.accept_rewrite).as_dict(), "status": repo.status()}


@router.get("/v1/team/status")
def team_status(daemon: DaemonDep, cwd: str = CwdQuery) -> dict[str, Any]:
    """Remote, ahead (local changes not pushed) / behind, last sync, last error, limits and the last sync's report."""
    return daemon.team.repo_for(cwd).status()


@router.get("/v1/team/memories")
def list_team_memories(daemon: DaemonDep, cwd: str = CwdQuery) -> dict[str, Any]:
    """The team's memories here, newest first, with who changed each last."""
    repo = daemon.team.repo_for(cwd)
    memories = [{**h.as_dict(), "author": repo.author_of(h.filename)} for h in repo.store.all_headers()]
    return {"team_dir": str(repo.store.path), "memories": memories, "invalid": [f.as_dict() for f in repo.store.invalid_files()]}


@router.post("/v1/team/memories", status_code=201)
def save_team_memory(request: SaveMemoryRequest, response: Response, daemon: DaemonDep) -> dict[str, Any]:
    """Create (201) or update (200) a team memory; it is pushed on the next sync (soon after this write)."""
    try:
        result = daemon.team.save(request.cwd, name=request.name, description=request.description, type=request.type, body=request.body)
    except SecretDetected:
        daemon.metrics.secrets_refused.labels("api").inc()
        raise
    daemon.metrics.memories_written.labels("api").inc()
    if not result.created:
        response.status_code = 200
    return {**result.memory.as_dict(), "path": str(result.memory.path), "created": result.created, "origin": "team"}


@router.delete("/v1/team/memories/{filename}", status_code=204)
def delete_team_memory(filename: str, daemon: DaemonDep, cwd: str = CwdQuery) -> Response:
    """Delete a team memory here; the next sync deletes it for everyone."""
    daemon.team.repo_for(cwd).store.delete(filename)
    daemon.metrics.memories_deleted.inc()
    return Response(status_code=204)
