"""What every page of the web view shares: the templates, the page response with its headers and the
project bar's counts, the form checks (CSRF token and Origin for a cookie), refusals shown as pages.
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from memoryd.api.deps import services
from memoryd.api.web import filters, views
from memoryd.api.web.auth import UI_PREFIX, UiSession, UiSessions, cookie_value
from memoryd.base.errors import Forbidden, MemorydError
from memoryd.service.auth import token_matches

if TYPE_CHECKING:
    from fastapi.templating import Jinja2Templates

HERE = Path(__file__).parent
F = TypeVar("F", bound=Callable[..., Any])


# memoryd's icon: every page links it inline (a data: URL), so no browser asks for /favicon.ico behind the login.
FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f6fb0"/>'
    '<text x="16" y="23" font-size="20" font-family="sans-serif" font-weight="bold" text-anchor="middle" '
    'fill="#fff">m</text></svg>'
)


@functools.cache
def templates() -> Jinja2Templates:
    """The page templates, built on the first page view: a daemon nobody opens /ui on never loads Jinja2 (~9 MB)."""
    from fastapi.templating import Jinja2Templates

    from memoryd.version import version

    loaded = Jinja2Templates(directory=str(HERE / "templates"))
    loaded.env.filters["when"] = filters.when
    loaded.env.filters["code"] = filters.code
    loaded.env.globals["favicon"] = "data:image/svg+xml," + quote(FAVICON_SVG)
    loaded.env.globals["version"] = version()  # the footer's: which install this daemon runs
    return loaded


# Scripts and styles come from /ui/static only: whatever a memory body holds, no inline script can run.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}


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
    p = context.get("p")
    nav = services(request).web.nav(p) if isinstance(p, views.Project) else {}
    return templates().TemplateResponse(
        request,
        template,
        {"csrf": session.csrf if session else "", "prefix": UI_PREFIX, "nav": nav, **context},
        status_code=status,
        headers=PAGE_HEADERS,
    )


def message_page(request: Request, title: str, message: str, *, status: int = 200) -> HTMLResponse:
    """A page that says one thing: a refusal, something missing, a goodbye."""
    return page(request, "message.html", status=status, title=title, message=message)


def project_page(
    request: Request, p: views.Project, template: str, heading: str, *, status: int = 200, **context: Any
) -> HTMLResponse:
    """A page about one project's `heading` (its dream runs, jobs, review queue...), titled `<project>: <heading>`."""
    return page(request, template, status=status, title=f"{p.title}: {heading}", p=p, **context)


def shows_errors(fn: F) -> F:
    """Render a refused request as a page naming the fix (the API's JSON is for programs)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemorydError as exc:
            return message_page(kwargs["request"], f"{exc.status}: {exc.code}", exc.message, status=exc.status)

    return wrapper  # type: ignore[return-value]


def back(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)
