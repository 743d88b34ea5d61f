"""FastAPI dependencies shared by the routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from memoryd.daemon import Daemon


def get_daemon(request: Request) -> Daemon:
    daemon: Daemon = request.app.state.daemon
    return daemon


DaemonDep = Annotated[Daemon, Depends(get_daemon)]
