"""GET /v1/stale: memories that name a path, script, flag, function or package the project no longer has."""

from __future__ import annotations

from fastapi import APIRouter, Query
from pydantic import Field

from memoryd.api.deps import StaleDep, StoresDep
from memoryd.api.models import ResponseModel

router = APIRouter(tags=["stale"])


class StaleName(ResponseModel):
    kind: str = Field(..., description="path, script, make target, flag, function, package or module.")
    name: str


class StaleMemory(ResponseModel):
    filename: str
    name: str
    type: str
    reasons: list[str] = Field(..., description="What the memory names that the project lacks, and what was checked.")
    names: list[StaleName]


class StaleReport(ResponseModel):
    checked: bool = Field(..., description="False when the project is not a git repository (nothing can be checked).")
    project_root: str | None
    memories: list[StaleMemory]


@router.get("/v1/stale", response_model=StaleReport)
def stale(
    stale: StaleDep,
    stores: StoresDep,
    cwd: str = Query(..., description="The agent's working directory; names the project."),
) -> StaleReport:
    """Checked against the project's git tree: `git ls-files`, its manifests, and a grep for names."""
    store = stores.for_cwd(cwd)
    root = stale.root_of(store)
    findings = stale.check(store)
    return StaleReport(
        checked=stale.checked(store),
        project_root=str(root) if root else None,
        memories=[StaleMemory.of(f, names=f.refs) for f in findings],
    )
