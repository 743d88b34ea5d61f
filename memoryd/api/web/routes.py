"""The web view's pages and forms. Thin: each page takes the one `WebView` service; reads and writes go
through the parts it holds (`MemoryDir.save/delete`, `dream.undo`, ...), the same ones the REST API uses.

State-changing forms need, with the session cookie, the page's CSRF token and an Origin equal to
the daemon's own (`pages.check_form`); a request carrying the bearer token needs neither.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from memoryd.api.deps import WebViewDep
from memoryd.api.web import live, new_memory, views
from memoryd.api.web.auth import COOKIE_NAME, UI_LOGIN_PATH, UI_PREFIX, cookie_value
from memoryd.api.web.conflict import ABSENT, Draft, EditConflict
from memoryd.api.web.forms import MemoryFormDep
from memoryd.api.web.pages import (
    FAVICON_SVG,
    back,
    check_form,
    message_page,
    page,
    project_page,
    shows_errors,
    templates,
    ui_sessions,
)
from memoryd.base import limits
from memoryd.base.errors import Conflict, MemorydError, MemoryNotFound, ReadOnly
from memoryd.relevance.applies_derive import derive
from memoryd.review.queue import ReviewItem
from memoryd.store.model import Memory, draft_fields

HERE = Path(__file__).parent
SPEND_DAYS = 14
# The vendored assets the pages load (Pico CSS, MIT, see static/pico.LICENSE.md), by name: nothing else is served.
STATIC = {
    "pico.min.css": "text/css",
    "style.css": "text/css",
    "theme.js": "text/javascript",
    "live.js": "text/javascript",
    "time.js": "text/javascript",
}

router = APIRouter(include_in_schema=False)
router.include_router(new_memory.router)


# ---------------------------------------------------------------------------- login
@router.post("/v1/ui/login-link", tags=["ui"])
def login_link(request: Request) -> dict[str, Any]:
    """A one-time link that logs a browser into the web view (bearer token required)."""
    code = ui_sessions(request).new_code()
    base = f"{request.url.scheme}://{request.headers.get('host', '')}"
    return {"url": f"{base}{UI_LOGIN_PATH}?code={code}", "expires_in_seconds": limits.UI_LOGIN_CODE_SECONDS}


@router.get(UI_LOGIN_PATH)
def login(request: Request, code: str = Query("")) -> Response:
    session = ui_sessions(request).redeem(code)
    if session is None:
        return message_page(
            request,
            "Login link used or expired",
            "This login link was already used or has expired. Run `memoryd ui` again for a fresh one.",
            status=401,
        )
    response = back(f"{UI_PREFIX}/")
    response.set_cookie(
        COOKIE_NAME,
        session.session_id,
        max_age=int(limits.UI_SESSION_SECONDS),
        path=UI_PREFIX,
        httponly=True,
        samesite="strict",
    )
    return response


@router.post(f"{UI_PREFIX}/logout")
def logout(request: Request, csrf: str = Form("")) -> Response:
    check_form(request, csrf)
    ui_sessions(request).end(cookie_value(request.headers.get("cookie", "")))
    response = message_page(request, "Logged out", "Run `memoryd ui` to open the web view again.")
    response.delete_cookie(COOKIE_NAME, path=UI_PREFIX)
    return response


@router.get(f"{UI_PREFIX}/static/{{name}}")
def static(name: str) -> Response:
    if name not in STATIC:
        return Response(status_code=404)
    return FileResponse(HERE / "static" / name, media_type=STATIC[name], headers={"Cache-Control": "max-age=3600"})


@router.get("/favicon.ico")
def favicon() -> Response:
    """The icon for a browser that asks anyway (pages link it inline); an SVG, which browsers take at this path."""
    return Response(FAVICON_SVG, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


# ---------------------------------------------------------------------------- projects and memories
@router.get(UI_PREFIX)
@router.get(f"{UI_PREFIX}/")
@shows_errors
def home(request: Request, web: WebViewDep) -> HTMLResponse:
    return page(request, "projects.html", title="Projects", rows=web.project_rows())


@router.get(f"{UI_PREFIX}/p/{{pid}}")
@shows_errors
def memories(request: Request, web: WebViewDep, pid: str, q: str = "", type: str = "") -> HTMLResponse:
    p = web.project(pid)
    headers = p.store.list(type or None)
    if q:
        needle = q.casefold()
        headers = [h for h in headers if needle in f"{h.filename}\n{h.name}\n{h.description}".casefold()]
    return page(
        request,
        "memories.html",
        title=p.title,
        p=p,
        memories=headers,
        q=q,
        type=type,
        types=limits.MEMORY_TYPES,
        invalid=p.store.invalid_files(),
        done=request.query_params.get("done", ""),
    )


@router.get(f"{UI_PREFIX}/p/{{pid}}/index")
@shows_errors
def index(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    return project_page(request, p, "index.html", "MEMORY.md", served=p.store.served_index())


@router.get(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}")
@shows_errors
def memory(request: Request, web: WebViewDep, pid: str, filename: str) -> HTMLResponse:
    p = web.project(pid)
    m = p.store.get(filename)
    return _memory_page(request, web, p, filename, m, m, done=request.query_params.get("done", ""))


def _memory_page(
    request: Request,
    web: views.WebView,
    p: views.Project,
    filename: str,
    form: Memory | dict[str, Any],
    shown: Memory,
    *,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    """A memory's page: `form` in the edit form (the file, or what was typed), `shown` (the file) rendered, with
    its recalls and whether it went stale."""
    return page(
        request,
        "memory.html",
        status=status,
        title=shown.name,
        p=p,
        m=form,
        html=rendered(p, shown.body, filename),
        recalls=web.recalls_of(p, filename),
        stale=web.stale_of(p, filename),
        derived=derive(shown.name, shown.description, shown.body, shown.type),
        body_max=limits.MEMORY_BODY_MAX_BYTES,
        **context,
    )


def rendered(p: views.Project, body: str, filename: str = "") -> Any:
    """The body as sanitised HTML, `[[links]]` pointing at the memories they name; a body cut short links to the
    file's whole text."""
    from memoryd.api.web.markdown import link_resolver, render

    url = f"{UI_PREFIX}/p/{p.pid}/m/{{}}"
    raw = url.format(filename) + "/raw" if filename else ""
    return render(body, link_resolver(p.store.all_headers(), url.format), raw_url=raw)


@router.get(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}/raw")
@shows_errors
def memory_raw(request: Request, web: WebViewDep, pid: str, filename: str) -> Response:
    """The memory file's whole text, as plain text (a page renders only its first part)."""
    text = web.project(pid).store.read_raw(filename)
    if text is None:
        raise MemoryNotFound(f"{filename} is not in this project's memory dir.")
    return Response(text, media_type="text/plain; charset=utf-8", headers={"X-Content-Type-Options": "nosniff"})


@router.post(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}")
@shows_errors
def edit_memory(
    request: Request,
    web: WebViewDep,
    pid: str,
    filename: str,
    mine: MemoryFormDep,
    version: str | None = Form(None),
    csrf: str = Form(""),
) -> Response:
    """Save the form only over the version it showed (#40): a newer save is never overwritten, the person chooses."""
    check_form(request, csrf)
    p = web.project(pid)
    if version is None:  # a form from before versions (or a script): it cannot say what it edited
        return conflict_page(request, web, p, filename, mine, "this form did not say which version it edited")
    expected = "" if version == ABSENT else version  # the store's version of "no file" is ""
    try:
        current = p.store.get(filename) if expected else None
        type_ = current.type if current else mine.type  # the form's type matters only to put back a deleted memory
        p.store.save(**draft_fields(replace(mine, type=type_)), filename=filename, source="ui", expected=expected)
    except Conflict as exc:
        if isinstance(exc, ReadOnly):
            raise
        return conflict_page(request, web, p, filename, mine, "it was saved by someone else after you opened it")
    except MemoryNotFound:
        return conflict_page(request, web, p, filename, mine, "it was deleted after you opened it")
    except MemorydError as exc:  # show the form again with what was typed and the fix
        shown = p.store.get(filename)
        draft = {**vars(mine), "filename": filename, "type": shown.type, "version": version}
        return _memory_page(request, web, p, filename, draft, shown, status=exc.status, error=exc.message, editing=True)
    return back(f"{UI_PREFIX}/p/{pid}/m/{filename}?done=saved")


def conflict_page(
    request: Request, web: views.WebView, p: views.Project, filename: str, mine: Draft, reason: str
) -> HTMLResponse:
    """Nothing was written: both texts side by side, and the three ways on."""
    try:
        theirs: Memory | None = p.store.get(filename)
    except MemoryNotFound:
        theirs = None
    conflict = EditConflict(filename=filename, mine=mine, theirs=theirs, reason=reason)
    return page(
        request,
        "conflict.html",
        status=409,
        title=f"Not saved: {theirs.name if theirs else filename} changed",
        p=p,
        c=conflict,
        html=rendered(p, theirs.body) if theirs else "",
    )


@router.get(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}/delete")
@shows_errors
def confirm_delete(request: Request, web: WebViewDep, pid: str, filename: str) -> HTMLResponse:
    p = web.project(pid)
    return page(request, "confirm_delete.html", title=f"Delete {filename}?", p=p, m=p.store.get(filename))


@router.post(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}/delete")
@shows_errors
def delete_memory(
    request: Request, web: WebViewDep, pid: str, filename: str, version: str | None = Form(None), csrf: str = Form("")
) -> Response:
    """Delete only the version the confirmation showed: changed since, the person is asked again about what it is
    now."""
    check_form(request, csrf)
    p = web.project(pid)
    try:
        if version is None:
            raise Conflict("this form did not say which version it deletes")
        p.store.delete(filename, source="ui", expected=version)
    except Conflict as exc:
        if isinstance(exc, ReadOnly):
            raise
        m = p.store.get(filename)
        error = "It changed since you asked to delete it (nothing was deleted); this is it now. Delete this version?"
        return page(request, "confirm_delete.html", status=409, title=f"Delete {filename}?", p=p, m=m, error=error)
    return back(f"{UI_PREFIX}/p/{pid}?done=deleted+{filename}")


# ---------------------------------------------------------------------------- dream, jobs, sessions, spend
@router.get(f"{UI_PREFIX}/p/{{pid}}/dream")
@shows_errors
def dream_runs(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    return project_page(
        request, p, "dream.html", "dream runs", runs=web.runs(p), done=request.query_params.get("done", "")
    )


@router.post(f"{UI_PREFIX}/p/{{pid}}/dream/{{run_id}}/undo")
@shows_errors
def dream_undo(request: Request, web: WebViewDep, pid: str, run_id: str, csrf: str = Form("")) -> Response:
    check_form(request, csrf)
    p = web.project(pid)
    if not web.undo_run(p, run_id):
        return message_page(request, "No such run", f"run {run_id} is not a run of this project.", status=404)
    return back(f"{UI_PREFIX}/p/{pid}/dream?done=undid+{run_id}")


@router.get(f"{UI_PREFIX}/p/{{pid}}/jobs")
@shows_errors
def jobs(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    jobs = web.extraction.jobs.recent(p.store.path)
    return project_page(request, p, "jobs.html", "extraction jobs", jobs=jobs, counts=web.extraction.status())


@router.get(f"{UI_PREFIX}/sessions")
@shows_errors
def sessions(request: Request, web: WebViewDep) -> HTMLResponse:
    return page(request, "sessions.html", title="Session notes", sessions=web.session_memory.recent())


@router.get(f"{UI_PREFIX}/sessions/{{session_id}}")
@shows_errors
def session_notes(request: Request, web: WebViewDep, session_id: str) -> HTMLResponse:
    text = web.session_memory.get(session_id)
    if text is None:
        return message_page(request, "No notes", f"session {session_id} has no notes yet.", status=404)
    return page(request, "session.html", title=f"Session {session_id}", session_id=session_id, text=text)


@router.get(f"{UI_PREFIX}/spend")
@shows_errors
def spend(request: Request, web: WebViewDep) -> HTMLResponse:
    return page(request, "spend.html", title="Model spend", **web.spend(SPEND_DAYS))


# ---------------------------------------------------------------------------- review queue
@router.get(f"{UI_PREFIX}/p/{{pid}}/review")
@shows_errors
def review(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    return _review_page(request, web, p, web.review.items(p.store), done=request.query_params.get("done", ""))


def _review_page(
    request: Request,
    web: views.WebView,
    p: views.Project,
    items: list[ReviewItem],
    *,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    """The project's review queue: `items` as shown (a refused edit shows the person's text again)."""
    wanted = web.review.wanted(p.store)
    return project_page(
        request,
        p,
        "review.html",
        "review",
        status=status,
        items=items,
        wanted=wanted,
        read_only=web.read_only,
        **context,
    )


@router.post(f"{UI_PREFIX}/p/{{pid}}/review/{{item_id}}")
@shows_errors
def review_decide(
    request: Request,
    web: WebViewDep,
    pid: str,
    item_id: str,
    edited: MemoryFormDep,
    action: str = Form(...),
    csrf: str = Form(""),
) -> Response:
    """One form per pending memory: its fields as edited, and which button was pressed."""
    check_form(request, csrf)
    p = web.project(pid)
    item = web.review.get(item_id)
    if item.memory_dir != str(p.store.path):
        return message_page(request, "Not in this project", f"{item_id} is not waiting in this project.", status=404)
    if action == "reject":
        web.review.reject(item_id)
        return back(f"{UI_PREFIX}/p/{pid}/review?done=rejected+{item.name}")
    try:
        web.review.edit(item_id, name=edited.name, description=edited.description, body=edited.body)
        if action == "approve":
            approved = web.review.approve(item_id)
            return back(f"{UI_PREFIX}/p/{pid}/review?done=approved+{approved.filename}")
    except MemorydError as exc:
        items = [
            replace(i, name=edited.name, description=edited.description, body=edited.body)
            if i.item_id == item_id
            else i
            for i in web.review.items(p.store)
        ]
        return _review_page(request, web, p, items, status=exc.status, error=exc.message)
    return back(f"{UI_PREFIX}/p/{pid}/review?done=saved+{item_id}")


# ---------------------------------------------------------------------------- stale memories
@router.get(f"{UI_PREFIX}/p/{{pid}}/stale")
@shows_errors
def stale(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    findings = web.stale.check(p.store)
    return project_page(
        request, p, "stale.html", "stale memories", findings=findings, checked=web.stale.checked(p.store)
    )


# ---------------------------------------------------------------------------- live activity (#30)
@router.get(f"{UI_PREFIX}/activity")
@shows_errors
def activity(request: Request, web: WebViewDep, p: str = "") -> HTMLResponse:
    """Recalls, extractions and dream runs, newest first; live.js adds new ones as the stream brings them."""
    project = web.project(p) if p else None
    return page(
        request,
        "activity.html",
        title="Live activity" + (f": {project.title}" if project else ""),
        p=project,
        events=live.recent(web, project),
        stream=f"{UI_PREFIX}/activity/stream" + (f"?p={project.pid}" if project else ""),
    )


@router.get(f"{UI_PREFIX}/activity/stream")
async def activity_stream(request: Request, web: WebViewDep, p: str = "") -> Response:
    """Server-sent events: each new recall, extraction or dream run as an HTML fragment (rendered here, escaped)."""
    live.check_same_origin(request)
    memory_dir = str(web.project(p).store.path) if p else None
    return live.stream(
        web, memory_dir, render=lambda item: templates().get_template("_event.html").render(e=item, prefix=UI_PREFIX)
    )


# The memory page's rule form (issue 50) lives in its own module.
from memoryd.api.web import forbid as _forbid  # noqa: E402

router.include_router(_forbid.router)
