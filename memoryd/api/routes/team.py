"""Team memory over HTTP: tie a project's team folder to a git remote, sync, status, and team saves."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import Field

from memoryd.api.deps import TeamDep
from memoryd.api.models import (
    Cwd,
    CwdQuery,
    InvalidFileOut,
    MemoryHeaderOut,
    RequestModel,
    ResponseModel,
    SavedMemoryOut,
    SaveMemoryRequest,
)
from memoryd.api.openapi import errors
from memoryd.base import limits

router = APIRouter(tags=["team"])


class TeamInitRequest(RequestModel):
    cwd: Cwd
    remote: str = Field(
        ..., description="A git remote the team can reach: ssh/https URL or a path to a bare repository."
    )
    branch: str = Field(limits.TEAM_DEFAULT_BRANCH, description="The branch that holds the team's memories.")


class TeamSyncRequest(RequestModel):
    cwd: Cwd
    accept_rewrite: bool = Field(
        False,
        description="Merge with a remote whose history was rewritten (force-pushed); both versions of any difference "
        "are kept.",
    )


class TeamLimitsOut(ResponseModel):
    max_entries: int
    max_push_bytes: int
    max_pushes_per_hour: int
    pushes_last_hour: int


class TeamStatusOut(ResponseModel):
    memory_dir: str
    team_dir: str
    remote: str = Field(description="The remote, any password replaced by ***.")
    branch: str
    author: str
    entries: int
    needs_review: list[str] = Field(description="Files holding both versions of a concurrent edit.")
    ahead: int = Field(description="Local changes not pushed yet.")
    pending: list[str]
    behind: int = Field(description="Remote commits not merged yet.")
    last_sync: float | None
    last_attempt: float | None
    last_error: str | None
    consecutive_failures: int
    next_retry: float | None
    remote_rewritten: bool = Field(description="The remote was force-pushed; syncs wait for `accept_rewrite`.")
    limits: TeamLimitsOut
    last_report: dict[str, Any] | None


class SyncReportOut(ResponseModel):
    pulled: list[str]
    removed: list[str]
    pushed: list[str]
    merged: list[str]
    conflicts: list[str] = Field(description="Changed on both sides; both versions kept in one file for review.")
    secret_skipped: list[dict[str, Any]] = Field(
        description="Never committed: {filename, findings} (kind and line, never the value)."
    )
    entries_capped: list[str]
    push_suppressed: dict[str, list[str]]
    kept_local: list[str]
    refused: list[dict[str, str]] = Field(
        description="Never read: {filename, reason} (a link, FIFO, device or oversized file here)."
    )
    invalid: list[dict[str, str]] = Field(
        description="A member's file not written here: {filename, reason} (a header memoryd may not read, e.g. YAML "
        "aliases)."
    )
    commit: str | None
    pushed_ok: bool


class TeamInitOut(TeamStatusOut):
    sync: SyncReportOut | None
    sync_error: str | None


class TeamSyncOut(SyncReportOut):
    status: TeamStatusOut


class TeamMemoryOut(MemoryHeaderOut):
    author: str = Field(description="Who changed the file last (git history).")


class TeamMemoryListOut(ResponseModel):
    team_dir: str
    memories: list[TeamMemoryOut]
    invalid: list[InvalidFileOut]


class SavedTeamMemoryOut(SavedMemoryOut):
    origin: str = Field(description="Always `team`.")


@router.post("/v1/team/init", responses=errors(409, 503))
def team_init(request: TeamInitRequest, team: TeamDep) -> TeamInitOut:
    """Tie the project's `memory/team/` to a git remote and run the first sync (`sync_error` when it failed; it is
    retried)."""
    done = team.init(request.cwd, request.remote, request.branch)
    sync = done.report.redacted() if done.report else None
    return TeamInitOut.model_validate({**done.repo.status(), "sync": sync, "sync_error": done.sync_error})


@router.post("/v1/team/sync", responses=errors(404, 409, 503))
def team_sync(request: TeamSyncRequest, team: TeamDep) -> TeamSyncOut:
    """Pull, merge, push now; what was pulled, pushed, merged, kept for review or held back, by file."""
    repo = team.repo_for(request.cwd)
    return TeamSyncOut.of(repo.sync(accept_rewrite=request.accept_rewrite).redacted(), status=repo.status())


@router.get("/v1/team/status", responses=errors(404))
def team_status(team: TeamDep, cwd: CwdQuery) -> TeamStatusOut:
    """Remote, ahead (local changes not pushed) / behind, last sync, last error, limits and the last sync's report."""
    return TeamStatusOut.model_validate(team.repo_for(cwd).status())


@router.get("/v1/team/memories", responses=errors(404))
def list_team_memories(team: TeamDep, cwd: CwdQuery) -> TeamMemoryListOut:
    """The team's memories here, newest first, with who changed each last."""
    repo = team.repo_for(cwd)
    memories = [TeamMemoryOut.of(h, author=repo.author_of(h.filename)) for h in repo.store.all_headers()]
    return TeamMemoryListOut.model_validate(
        {"team_dir": str(repo.store.path), "memories": memories, "invalid": repo.store.invalid_files()}
    )


@router.post("/v1/team/memories", status_code=201, responses=errors(404))
def save_team_memory(request: SaveMemoryRequest, response: Response, team: TeamDep) -> SavedTeamMemoryOut:
    """Create (201) or update (200) a team memory; it is pushed on the next sync (soon after this write)."""
    result = team.save(
        request.cwd, name=request.name, description=request.description, type=request.type, body=request.body
    )
    if not result.created:
        response.status_code = 200
    return SavedTeamMemoryOut.of(result.memory, path=str(result.memory.path), created=result.created, origin="team")


@router.delete(
    "/v1/team/memories/{filename}",
    status_code=204,
    response_class=Response,
    responses={204: {"description": "Deleted; no body."}, **errors(404)},
)
def delete_team_memory(filename: str, team: TeamDep, cwd: CwdQuery) -> Response:
    """Delete a team memory here; the next sync deletes it for everyone."""
    team.repo_for(cwd).store.delete(filename, source="team")
    return Response(status_code=204)
