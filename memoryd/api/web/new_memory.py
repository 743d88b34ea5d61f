"""The web view's "New memory" form: a memory a person writes, saved create-only through the one write path with
the API's own validation; the same CSRF and Origin checks as every form (`pages.check_form`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from memoryd.api.deps import WebViewDep
from memoryd.api.web import views
from memoryd.api.web.auth import UI_PREFIX
from memoryd.api.web.conflict import Draft
from memoryd.api.web.forms import MemoryFormDep
from memoryd.api.web.pages import back, check_form, project_page, shows_errors
from memoryd.base import limits
from memoryd.base.errors import MemorydError, ReadOnly
from memoryd.store.model import draft_fields

router = APIRouter(include_in_schema=False)


@router.get(f"{UI_PREFIX}/p/{{pid}}/new")
@shows_errors
def new_memory_form(request: Request, web: WebViewDep, pid: str, type: str = "") -> HTMLResponse:
    """An empty form for a memory a person writes (the API's fields, validated by the same save)."""
    p = web.project(pid)
    draft = Draft(name="", description="", body="", type=type if type in limits.MEMORY_TYPES else "")
    return _new_page(request, p, draft)


@router.post(f"{UI_PREFIX}/p/{{pid}}/new")
@shows_errors
def create_memory(request: Request, web: WebViewDep, pid: str, mine: MemoryFormDep, csrf: str = Form("")) -> Response:
    """Create only: a name in use is never overwritten by a form that did not show that memory (409, the form
    again with what was typed); any other refusal shows the form with the API's own message and fix."""
    check_form(request, csrf)
    p = web.project(pid)
    try:
        saved = p.store.save(**draft_fields(mine), source="ui", only_new=True)
    except ReadOnly:
        raise
    except MemorydError as exc:
        return _new_page(request, p, mine, status=exc.status, error=exc.message)
    return back(f"{UI_PREFIX}/p/{pid}/m/{saved.memory.filename}?done=created")


def _new_page(request: Request, p: views.Project, draft: Draft, *, status: int = 200, **context: Any) -> HTMLResponse:
    return project_page(
        request,
        p,
        "new_memory.html",
        "New memory",
        status=status,
        m=draft,
        types=limits.MEMORY_TYPES,
        body_max=limits.MEMORY_BODY_MAX_BYTES,
        **context,
    )
