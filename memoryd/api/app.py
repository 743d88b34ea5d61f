"""`create_app(services)`: the FastAPI app. Routes are thin; the services they are given do the work."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from memoryd import __version__
from memoryd.api.docs import install_docs
from memoryd.api.errors import install_error_handlers
from memoryd.api.middleware import GuardMiddleware, allowed_hosts
from memoryd.api.openapi import install_openapi
from memoryd.api.routes import (  # review before write, stale memories (#21)
    backfill,
    dream,
    events,
    guard,
    health,
    hooks,
    memories,
    recall,
    review,
    sessions,
    stale,
    team,
    transcripts,
)
from memoryd.api.services import Services
from memoryd.api.web import routes as ui_routes
from memoryd.api.web.auth import UiSessions
from memoryd.mcp.http import McpEndpoint

# One line per resource; /openapi.json documents a new router's auth and shared errors by itself.
ROUTERS = [
    backfill.router,
    guard.router,
    health.router,
    memories.router,
    recall.router,
    events.router,
    dream.router,
    hooks.router,
    transcripts.router,
    sessions.router,
    team.router,
]
ROUTERS += [review.router, stale.router]  # review before write, stale memories (#21)


def create_app(
    services: Services, *, start: Callable[[], None] | None = None, stop: Callable[[], None] | None = None
) -> FastAPI:
    """Build the app over `services`; the app's lifespan calls `start` before the first request and `stop` after the
    last."""

    mcp = McpEndpoint(lambda: services.token, hosts=allowed_hosts(services.host))  # MCP over streamable HTTP at /mcp

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if start is not None:
            start()
        try:
            async with mcp.running():
                yield
        finally:
            if stop is not None:
                stop()

    app = FastAPI(
        title="memoryd",
        version=__version__,
        description=(
            "Local memory for coding agents. Every endpoint but /v1/health needs `Authorization: Bearer <token>` "
            '(the token is in $MEMORYD_HOME/token); every error answers `{"error": {"code", "message"}}`.'
        ),
        lifespan=lifespan,
        docs_url=None,  # install_docs serves /docs and /redoc with local assets
        redoc_url=None,
    )
    app.state.services = services  # read through api/deps.py only
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.router.routes.append(mcp.route)
    install_docs(app)
    install_openapi(app)
    app.state.ui_sessions = UiSessions(
        clock=services.clock.monotonic
    )  # the web view at /ui: its session cookie is accepted on /ui paths only
    app.include_router(ui_routes.router)
    app.add_middleware(
        GuardMiddleware,
        token=lambda: services.token,
        metrics=services.metrics,
        hosts=allowed_hosts(services.host),
        ui_session=app.state.ui_sessions.valid,
    )
    return app
