"""The dream's request and answer shapes (status, runs, undo), beside the core's shapes in models.py."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memoryd.api.models import Cwd, RequestModel, ResponseModel


class CwdRequest(RequestModel):
    cwd: Cwd


class GateOut(ResponseModel):
    name: str
    passes: bool
    value: Any
    threshold: Any
    detail: str


class RunChangeOut(ResponseModel):
    op: str
    filename: str
    why: str


class RunOut(ResponseModel):
    run_id: str
    status: str
    forced: bool
    method: str | None
    started_at: str | None
    finished_at: str | None
    changes: list[RunChangeOut]
    notes: list[str]
    error: str | None
    undone_at: str | None


class RunningOut(ResponseModel):
    run_id: str
    phase: str
    files_touched: list[str]


class DreamStatusOut(ResponseModel):
    memory_dir: str
    enabled: bool
    gates: list[GateOut]
    last_run: RunOut | None
    running: RunningOut | None
    next_check: str | None


class RunStartedOut(ResponseModel):
    run_id: str


class CancelOut(ResponseModel):
    cancelled: bool
    run_id: str | None = None
    message: str | None = None


class RunsOut(ResponseModel):
    runs: list[RunOut] = Field(description="Newest first, at most 50.")


class UndoOut(ResponseModel):
    run_id: str
    restored: list[str]
