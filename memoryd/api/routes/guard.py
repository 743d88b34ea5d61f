"""GET /v1/guard: the memories of a project that hold acts (their `forbid:`), and those whose `forbid:` does not
parse, for `memoryd guard` and the web view."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import Field

from memoryd.api.deps import HooksDep, StoresDep
from memoryd.api.models import CwdQuery, ResponseModel

router = APIRouter(tags=["guard"])


class GuardRuleOut(ResponseModel):
    filename: str
    name: str
    description: str
    path: str = Field(description="The memory file: edit or remove its `forbid:` to change or drop the rule.")
    forbid: dict[str, object] = Field(description="commands, writes, reads, imports, creates, instead, enforce.")
    will_stop: str = Field(description='What it holds, in a line: "will stop: npm, npx — use pnpm".')


class GuardBrokenOut(ResponseModel):
    filename: str
    path: str
    error: str = Field(description="Why its `forbid:` holds nothing, and the fix.")


class GuardOut(ResponseModel):
    memory_dir: str
    mode: str = Field(description="`[guard] mode`: deny, ask, context or off (a memory's `enforce:` overrides it).")
    rules: list[GuardRuleOut] = Field(description="The memories that hold acts, by filename.")
    broken: list[GuardBrokenOut] = Field(description="Memories whose `forbid:` does not parse, so they hold nothing.")


@router.get("/v1/guard")
def guard_rules(cwd: CwdQuery, stores: StoresDep, hooks: HooksDep) -> GuardOut:
    """What each memory of the project forbids, so a person sees every rule that can hold an agent's act."""
    store = stores.for_cwd(cwd)
    guard = hooks.guard
    return GuardOut(
        memory_dir=str(store.path),
        mode=guard.mode,
        rules=[
            GuardRuleOut(
                filename=r.filename,
                name=r.name,
                description=r.description,
                path=r.path,
                forbid=r.forbid.to_meta(),
                will_stop=r.forbid.summary(),
            )
            for r in guard.rules(store)
        ],
        broken=[GuardBrokenOut(filename=r.filename, path=r.path, error=r.problem) for r in guard.broken(store)],
    )
