"""`create_app(daemon)`: the FastAPI app. Routes are thin; the daemon's parts do the work."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import AsyncIterator

from fastapi import FastAPI

from memoryd import __version__
from memoryd.api.errors import install_error_handlers
from memoryd.api.middleware import GuardMiddleware
from memoryd.api.routes import dream, events, health, hooks, memories, recall, sessions, team, transcripts
from memoryd.daemon import Daemon

ROUTERS = [
    health.router, memories.router, recall.router, events.router, dream.router, hooks.router, transcripts.router, sessions.router,
    team.router,
]


def create_app(daemon: Daemon, *, manage_lifecycle: bool = True) -> FastAPI:
    """Build the app; with `manage_lifecycle` the app's lifespan starts and stops the daemon."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if manage_lifecycle:
            daemon.start()
        try:
            yield
        finally:
            if manage_lifecycle:
                daemon.stop()

    app = FastAPI(
        title="memoryd",
        version=__version__,
        description="Local memory for coding agents. Every endpoint but /v1/health needs `Authorization: Bearer <token>`.",
        lifespan=lifespan,
    )
    app.state.daemon = daemon
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(GuardMiddleware, token=lambda: daemon.token, metrics=daemon.metrics)
    return app
