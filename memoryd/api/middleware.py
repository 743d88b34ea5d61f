"""`GuardMiddleware` (pure ASGI, cheap on the hot path): the Host and Origin checks, bearer auth,
the 256 KB body limit, the web view's anti-framing headers, and per-route metrics. It runs before
routing, so a refused request never reaches a route.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from memoryd.api.errors import error_body
from memoryd.api.web.auth import UI_LOGIN_PATH, cookie_value, is_ui_path
from memoryd.base import limits
from memoryd.base.errors import Forbidden, MemorydError, RequestTooLarge, Unauthorized
from memoryd.base.identity import CHALLENGE_HEADER, PROOF_HEADER, is_challenge, proof
from memoryd.base.metrics import Metrics
from memoryd.service.auth import token_matches

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# No token needed: liveness only (spec §7). The OpenAPI schema and /docs need the token too:
# they map every endpoint, and another local user has no business reading even that.
PUBLIC_PATHS = frozenset({"/v1/health", "/favicon.ico"})  # the icon: a browser asks for it without a cookie
# Names a browser may use for the daemon. Any other Host is a DNS-rebinding page on another origin.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Issue 31: a page on another 127.0.0.1 port is same-site, so the web view's cookie rode in an iframe
# and a framed click passed its CSRF check. Every /ui answer refuses to be framed, old browsers and new.
NO_FRAMING_HEADERS = ((b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"))
CHALLENGE_NAME = CHALLENGE_HEADER.lower().encode()
PROOF_NAME = PROOF_HEADER.lower().encode()
DEFAULT_PORTS = {"http": 80, "https": 443}


def allowed_hosts(configured_host: str) -> frozenset[str]:
    """The loopback names plus the host the daemon was told to bind (when not a wildcard)."""
    extra = {configured_host.strip("[]").lower()} if configured_host not in ("", "0.0.0.0", "::") else set()
    return LOOPBACK_HOSTS | extra


def host_of(authority: str) -> str:
    """`[::1]:7377` → `::1`, `Localhost:7377` → `localhost`."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1 : authority.find("]")] if "]" in authority else authority
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def origin_host(origin: str) -> str | None:
    """The host of an Origin header (`http://127.0.0.1:7377` → `127.0.0.1`); None for `null` or junk."""
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme not in ("http", "https"):
        return None
    return host_of(rest.split("/", 1)[0])


def origin_port(origin: str) -> int | None:
    """The port of an Origin header (`http://127.0.0.1:3000` → 3000, `http://localhost` → 80); None for junk."""
    scheme, _, rest = origin.partition("://")
    authority = rest.split("/", 1)[0]
    port = authority.rsplit("]", 1)[-1].rpartition(":")[2] if ":" in authority.rsplit("]", 1)[-1] else ""
    if not port:
        return DEFAULT_PORTS.get(scheme)
    return int(port) if port.isdigit() else None


async def _send_error(send: Send, exc: MemorydError, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer with an error of the one tree, rendered as the routes render theirs."""
    body = error_body(exc)
    await send(
        {
            "type": "http.response.start",
            "status": exc.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        token: Callable[[], str],
        metrics: Metrics,
        hosts: frozenset[str] = LOOPBACK_HOSTS,
        max_body: int = limits.REQUEST_MAX_BYTES,
        ui_session: Callable[[str], bool] | None = None,
    ) -> None:
        self.app = app
        self.ui_session = ui_session  # the web view's session cookie check: accepted on /ui paths only
        self.hosts = hosts
        self.token = token
        self.metrics = metrics
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status_holder = {"status": 500}

        framed = is_ui_path(scope["path"])
        answer = self._proof(scope)

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                if answer is not None:
                    message = {**message, "headers": [*message.get("headers", []), (PROOF_NAME, answer)]}
                if framed:  # a page's own policy (the web view's) already carries frame-ancestors 'none'
                    headers = list(message.get("headers", []))
                    have = {name.lower() for name, _ in headers}
                    message = {**message, "headers": headers + [h for h in NO_FRAMING_HEADERS if h[0] not in have]}
            await send(message)

        try:
            await self._guarded(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", None) or ("public" if scope["path"] in PUBLIC_PATHS else "unmatched")
            self.metrics.http_requests.labels(label, str(status_holder["status"])).inc()
            self.metrics.http_latency.labels(label).observe(time.perf_counter() - started)

    def _proof(self, scope: Scope) -> bytes | None:
        """The answer to a client's identity challenge (base/identity.py), bound to the address it reached."""
        server = scope.get("server")
        if not server or server[1] is None:
            return None
        for name, value in scope.get("headers", []):
            if name == CHALLENGE_NAME:
                challenge = value.decode("latin-1")
                return (
                    proof(self.token(), challenge, server[0], server[1]).encode() if is_challenge(challenge) else None
                )
        return None

    def _foreign_origin(self, scope: Scope) -> str | None:
        """Why a request from a browser page on another origin is refused, or None when it is not."""
        headers = dict(scope.get("headers", []))
        host = host_of(headers.get(b"host", b"").decode("latin-1"))
        if host not in self.hosts:
            return (
                f"Host {host or '(none)'!r} is not a loopback name: reach memoryd at http://127.0.0.1:<port> "
                "(a web page on another origin may not call it; this guards against DNS rebinding)."
            )
        origin = headers.get(b"origin")
        if origin is not None and scope.get("method", "GET") not in SAFE_METHODS:
            text = origin.decode("latin-1")
            server = scope.get("server")
            # The port and scheme too (issue 31): a page on 127.0.0.1:3000 is another origin, though its host is
            # loopback; the daemon serves plain http, so an https origin is never its own.
            if (
                origin_host(text) not in self.hosts
                or not text.startswith("http://")
                or (server and server[1] is not None and origin_port(text) != server[1])
            ):
                return (
                    "a state-changing request from a web page on another origin is refused; call memoryd from a "
                    "local program."
                )
        return None

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        refusal = self._foreign_origin(scope)
        if refusal is not None:
            await _send_error(send, Forbidden(refusal))
            return
        if path not in PUBLIC_PATHS and not self._ui_allowed(scope):
            presented = ""
            for name, value in scope.get("headers", []):
                if name == b"authorization":
                    raw = value.decode("latin-1")
                    if raw[:7].lower() == "bearer ":
                        presented = raw[7:].strip()
                    break
            if not presented or not token_matches(self.token(), presented):
                await _send_error(
                    send,
                    Unauthorized(
                        "missing or wrong bearer token: send 'Authorization: Bearer <token>' with the token from "
                        "$MEMORYD_HOME/token (default ~/.memoryd/token)."
                    ),
                    [(b"www-authenticate", b"Bearer")],
                )
                return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_body:
                    await _send_error(send, RequestTooLarge(self._too_large_message(declared)))
                    return
        received = 0
        max_body = self.max_body
        too_large: list[str] = []  # set once a chunked body passes the limit

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > max_body:  # a chunked body with no Content-Length
                    too_large.append(self._too_large_message(received))
                    raise RequestTooLarge(too_large[0])
            return message

        response_started = False

        async def tracking_send(message: Message) -> None:
            # The framework may turn the receive error into its own 400: answer 413 instead.
            nonlocal response_started
            if too_large:
                if message["type"] == "http.response.start" and not response_started:
                    response_started = True
                    await _send_error(send, RequestTooLarge(too_large[0]))
                return
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except RequestTooLarge as exc:
            if not response_started:
                await _send_error(send, exc)

    def _ui_allowed(self, scope: Scope) -> bool:
        """A /ui path with a live session cookie (or the one-time login route, which checks its code)."""
        path = scope["path"]
        if self.ui_session is None or not is_ui_path(path):
            return False
        if path == UI_LOGIN_PATH:
            return True
        cookies = b"; ".join(v for k, v in scope.get("headers", []) if k == b"cookie").decode("latin-1")
        return self.ui_session(cookie_value(cookies))

    def _too_large_message(self, size: int) -> str:
        return (
            f"request body is {size:,} bytes, over the {self.max_body:,}-byte limit; "
            "send less (split a large memory into several focused ones)."
        )
