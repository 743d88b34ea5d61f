"""Liveness, status and metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from memoryd import __version__
from memoryd.api.deps import DaemonDep
from memoryd.metrics import CONTENT_TYPE

router = APIRouter()


@router.get("/v1/health", tags=["service"])
def health() -> dict[str, str]:
    """Liveness; the only endpoint that needs no token."""
    return {"status": "ok", "version": __version__}


@router.get("/v1/status", tags=["service"])
def status(daemon: DaemonDep) -> dict[str, Any]:
    """Mode (llm/offline), model, uptime, watched folders, jobs, next dream check."""
    return daemon.status()


@router.get("/metrics", tags=["service"])
def metrics(daemon: DaemonDep) -> Response:
    """Prometheus text format."""
    return Response(daemon.metrics.render(), media_type=CONTENT_TYPE)
