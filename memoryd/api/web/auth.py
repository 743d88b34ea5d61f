"""Browser sessions of the web view: one-time login codes, the session cookie, its CSRF token.

The bearer token never reaches the browser: `memoryd ui` (holding the token) asks for a login
code, the browser trades it once for an HttpOnly, SameSite=Strict cookie scoped to /ui.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from memoryd.base import limits

COOKIE_NAME = "memoryd_ui"
UI_PREFIX = "/ui"
UI_LOGIN_PATH = "/ui/login"


@dataclass(frozen=True)
class UiSession:
    session_id: str
    csrf: str
    expires_at: float


class UiSessions:
    """Login codes (single use, short-lived) and sessions, in memory only."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._codes: dict[str, float] = {}
        self._sessions: dict[str, UiSession] = {}
        self._lock = threading.Lock()

    def new_code(self) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._purge()
            self._codes[code] = self._clock() + limits.UI_LOGIN_CODE_SECONDS
        return code

    def redeem(self, code: str) -> UiSession | None:
        """Trade a login code for a session; a code works once, and only before it expires."""
        with self._lock:
            self._purge()
            match = next((c for c in self._codes if hmac.compare_digest(c.encode(), code.encode())), None)
            if match is None:
                return None
            del self._codes[match]
            session = UiSession(
                secrets.token_urlsafe(32), secrets.token_urlsafe(24), self._clock() + limits.UI_SESSION_SECONDS
            )
            self._sessions[session.session_id] = session
            return session

    def get(self, session_id: str) -> UiSession | None:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.expires_at < self._clock():
                return None
            return session

    def valid(self, session_id: str) -> bool:
        return bool(session_id) and self.get(session_id) is not None

    def end(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def _purge(self) -> None:
        now = self._clock()
        self._codes = {c: t for c, t in self._codes.items() if t >= now}
        self._sessions = {k: s for k, s in self._sessions.items() if s.expires_at >= now}


def is_ui_path(path: str) -> bool:
    """/ui and below, never a path with a `..` segment (it could name something else once normalized)."""
    return (path == UI_PREFIX or path.startswith(UI_PREFIX + "/")) and ".." not in path.split("/")


def cookie_value(raw_cookie_header: str) -> str:
    """The session id in a Cookie header, or ''."""
    for part in raw_cookie_header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE_NAME:
            return value
    return ""
