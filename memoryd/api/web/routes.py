"""The web view's pages and forms. Thin: each page takes the one `WebView` service; reads and writes go
through the parts it holds (`MemoryDir.save/delete`, `dream.undo`, ...), the same ones the REST API uses.

State-changing forms need, with the session cookie, the page's CSRF token and an Origin equal to
the daemon's own; a request carrying the bearer token needs neither (no ambient credential).
"""

from __future__ import annotations

import functools
import hmac
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from memoryd.api.deps import WebViewDep, services
from memoryd.api.web import live, views
from memoryd.api.web.auth import COOKIE_NAME, UI_LOGIN_PATH, UI_PREFIX, UiSession, UiSessions, cookie_value
from memoryd.base import limits
from memoryd.base.errors import Forbidden, MemorydError
from memoryd.service.auth import token_matches

if TYPE_CHECKING:
    from fastapi.templating import Jinja2Templates

HERE = Path(__file__).parent


@functools.cache
def templates() -> Jinja2Templates:
    """The page templates, built on the first page view: a daemon nobody opens /ui on never loads Jinja2 (~9 MB)."""
    from fastapi.templating import Jinja2Templates

    loaded = Jinja2Templates(directory=str(HERE / "templates"))
    loaded.env.filters["when"] = lambda ts: (
        datetime.fromtimestamp(float(ts), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if ts else "-"
    )
    return loaded


SPEND_DAYS = 14
# Scripts and styles come from /ui/static only: whatever a memory body holds, no inline script can run.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}
# The vendored assets the pages load (Pico CSS, MIT, see static/pico.LICENSE.md), by name: nothing else is served.
STATIC = {
    "pico.min.css": "text/css",
    "style.css": "text/css",
    "theme.js": "text/javascript",
    "live.js": "text/javascript",
}

router = APIRouter(include_in_schema=False)
F = TypeVar("F", bound=Callable[..., Any])


def ui_sessions(request: Request) -> UiSessions:
    sessions: UiSessions = request.app.state.ui_sessions
    return sessions


def current_session(request: Request) -> UiSession | None:
    return ui_sessions(request).get(cookie_value(request.headers.get("cookie", "")))


def has_bearer(request: Request) -> bool:
    raw = request.headers.get("authorization", "")
    return raw[:7].lower() == "bearer " and token_matches(services(request).token, raw[7:].strip())


def check_form(request: Request, csrf: str) -> None:
    """Refuse a cookie-authenticated form unless it carries the session's CSRF token and comes
    from the daemon's own origin (another local port is same-site, so the cookie alone is not enough)."""
    if has_bearer(request):
        return
    session = current_session(request)
    expected = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if request.headers.get("origin") != expected:
        raise Forbidden(
            f"this form must be sent from the memoryd web view itself ({expected}); reload the page and try again."
        )
    if session is None or not hmac.compare_digest(csrf.encode(), session.csrf.encode()):
        raise Forbidden("the form's CSRF token is missing or stale; reload the page and try again.")


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    session = current_session(request)
    return templates().TemplateResponse(
        request,
        template,
        {"csrf": session.csrf if session else "", "prefix": UI_PREFIX, **context},
        status_code=status,
        headers=PAGE_HEADERS,
    )


def shows_errors(fn: F) -> F:
    """Render a refused request as a page naming the fix (the API's JSON is for programs)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemorydError as exc:
            return page(
                kwargs["request"],
                "message.html",
                status=exc.status,
                title=f"{exc.status}: {exc.code}",
                message=exc.message,
            )

    return wrapper  # type: ignore[return-value]


def back(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


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
        return page(
            request,
            "message.html",
            status=401,
            title="Login link used or expired",
            message="This login link was already used or has expired. Run `memoryd ui` again for a fresh one.",
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
    response = page(request, "message.html", title="Logged out", message="Run `memoryd ui` to open the web view again.")
    response.delete_cookie(COOKIE_NAME, path=UI_PREFIX)
    return response


@router.get(f"{UI_PREFIX}/static/{{name}}")
def static(name: str) -> Response:
    if name not in STATIC:
        return Response(status_code=404)
    return FileResponse(HERE / "static" / name, media_type=STATIC[name], headers={"Cache-Control": "max-age=3600"})


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
    return page(request, "index.html", title=f"{p.title}: MEMORY.md", p=p, served=p.store.served_index())


@router.get(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}")
@shows_errors
def memory(request: Request, web: WebViewDep, pid: str, filename: str) -> HTMLResponse:
    p = web.project(pid)
    m = p.store.get(filename)
    return page(
        request,
        "memory.html",
        title=m.name,
        p=p,
        m=m,
        html=rendered(p, m.body),
        recalls=web.recalls_of(p, filename),
        body_max=limits.MEMORY_BODY_MAX_BYTES,
        done=request.query_params.get("done", ""),
    )


def rendered(p: views.Project, body: str) -> Any:
    """The body as sanitised HTML, `[[links]]` pointing at the memories they name."""
    from memoryd.api.web.markdown import link_resolver, render

    return render(body, link_resolver(p.store.all_headers(), lambda filename: f"{UI_PREFIX}/p/{p.pid}/m/{filename}"))


@router.post(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}")
@shows_errors
def edit_memory(
    request: Request,
    web: WebViewDep,
    pid: str,
    filename: str,
    name: str = Form(...),
    description: str = Form(...),
    body: str = Form(""),
    csrf: str = Form(""),
) -> Response:
    check_form(request, csrf)
    p = web.project(pid)
    current = p.store.get(filename)
    try:
        p.store.save(name=name, description=description, type=current.type, body=body, filename=filename, source="ui")
    except MemorydError as exc:  # show the form again with what was typed and the fix
        draft = {"filename": filename, "name": name, "description": description, "type": current.type, "body": body}
        return page(
            request,
            "memory.html",
            status=exc.status,
            title=current.name,
            p=p,
            m=draft,
            html=rendered(p, current.body),
            recalls=web.recalls_of(p, filename),
            body_max=limits.MEMORY_BODY_MAX_BYTES,
            error=exc.message,
            editing=True,
        )
    return back(f"{UI_PREFIX}/p/{pid}/m/{filename}?done=saved")


@router.get(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}/delete")
@shows_errors
def confirm_delete(request: Request, web: WebViewDep, pid: str, filename: str) -> HTMLResponse:
    p = web.project(pid)
    return page(request, "confirm_delete.html", title=f"Delete {filename}?", p=p, m=p.store.get(filename))


@router.post(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}/delete")
@shows_errors
def delete_memory(request: Request, web: WebViewDep, pid: str, filename: str, csrf: str = Form("")) -> Response:
    check_form(request, csrf)
    web.project(pid).store.delete(filename, source="ui")
    return back(f"{UI_PREFIX}/p/{pid}?done=deleted+{filename}")


# ---------------------------------------------------------------------------- dream, jobs, sessions, spend
@router.get(f"{UI_PREFIX}/p/{{pid}}/dream")
@shows_errors
def dream_runs(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    return page(
        request,
        "dream.html",
        title=f"{p.title}: dream runs",
        p=p,
        runs=web.runs(p),
        done=request.query_params.get("done", ""),
    )


@router.post(f"{UI_PREFIX}/p/{{pid}}/dream/{{run_id}}/undo")
@shows_errors
def dream_undo(request: Request, web: WebViewDep, pid: str, run_id: str, csrf: str = Form("")) -> Response:
    check_form(request, csrf)
    p = web.project(pid)
    if not web.undo_run(p, run_id):
        return page(
            request,
            "message.html",
            status=404,
            title="No such run",
            message=f"run {run_id} is not a run of this project.",
        )
    return back(f"{UI_PREFIX}/p/{pid}/dream?done=undid+{run_id}")


@router.get(f"{UI_PREFIX}/p/{{pid}}/jobs")
@shows_errors
def jobs(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    return page(
        request,
        "jobs.html",
        title=f"{p.title}: extraction jobs",
        p=p,
        jobs=web.extraction.jobs.recent(p.store.path),
        counts=web.extraction.status(),
    )


@router.get(f"{UI_PREFIX}/sessions")
@shows_errors
def sessions(request: Request, web: WebViewDep) -> HTMLResponse:
    return page(request, "sessions.html", title="Session notes", sessions=web.session_memory.recent())


@router.get(f"{UI_PREFIX}/sessions/{{session_id}}")
@shows_errors
def session_notes(request: Request, web: WebViewDep, session_id: str) -> HTMLResponse:
    text = web.session_memory.get(session_id)
    if text is None:
        return page(
            request, "message.html", status=404, title="No notes", message=f"session {session_id} has no notes yet."
        )
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
    return page(
        request,
        "review.html",
        title=f"{p.title}: review",
        p=p,
        items=web.review.items(p.store),
        wanted=web.review.wanted(p.store),
        read_only=web.read_only,
        done=request.query_params.get("done", ""),
    )


@router.post(f"{UI_PREFIX}/p/{{pid}}/review/{{item_id}}")
@shows_errors
def review_decide(
    request: Request,
    web: WebViewDep,
    pid: str,
    item_id: str,
    action: str = Form(...),
    name: str = Form(...),
    description: str = Form(...),
    body: str = Form(""),
    csrf: str = Form(""),
) -> Response:
    """One form per pending memory: its fields as edited, and which button was pressed."""
    check_form(request, csrf)
    p = web.project(pid)
    item = web.review.get(item_id)
    if item["memory_dir"] != str(p.store.path):
        return page(
            request,
            "message.html",
            status=404,
            title="Not in this project",
            message=f"{item_id} is not waiting in this project.",
        )
    if action == "reject":
        web.review.reject(item_id)
        return back(f"{UI_PREFIX}/p/{pid}/review?done=rejected+{item['name']}")
    try:
        web.review.edit(item_id, name=name, description=description, body=body)
        if action == "approve":
            approved = web.review.approve(item_id)
            return back(f"{UI_PREFIX}/p/{pid}/review?done=approved+{approved['filename']}")
    except MemorydError as exc:
        items = [
            {**i, "name": name, "description": description, "body": body} if i["item_id"] == item_id else i
            for i in web.review.items(p.store)
        ]
        return page(
            request,
            "review.html",
            status=exc.status,
            title=f"{p.title}: review",
            p=p,
            items=items,
            wanted=web.review.wanted(p.store),
            read_only=web.read_only,
            error=exc.message,
        )
    return back(f"{UI_PREFIX}/p/{pid}/review?done=saved+{item_id}")


# ---------------------------------------------------------------------------- stale memories
@router.get(f"{UI_PREFIX}/p/{{pid}}/stale")
@shows_errors
def stale(request: Request, web: WebViewDep, pid: str) -> HTMLResponse:
    p = web.project(pid)
    return page(
        request,
        "stale.html",
        title=f"{p.title}: stale memories",
        p=p,
        findings=web.stale.check(p.store),
        checked=web.stale.checked(p.store),
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
