"""Liveness, status and metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response

from memoryd import __version__
from memoryd.api.deps import MetricsDep, StatusDep
from memoryd.api.models import HealthOut, StatusOut
from memoryd.base.metrics import CONTENT_TYPE

router = APIRouter(tags=["service"])


@router.get("/v1/health")
async def health() -> HealthOut:
    """Liveness; the only endpoint that needs no token. Async: answered on the event loop, never queued
    behind the worker threads busy with saves and recalls (issue 31: 366 ms under 20 clients)."""
    return HealthOut(status="ok", version=__version__)


@router.get("/v1/status")
def status(status: StatusDep) -> StatusOut:
    """Mode (llm/offline), model, uptime, watched folders, jobs, next dream check."""
    return StatusOut.model_validate(status.report())


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {
            "description": "Prometheus text exposition format.",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    },
)
def metrics(metrics: MetricsDep) -> Response:
    """Prometheus text format."""
    return Response(metrics.render(), media_type=CONTENT_TYPE)
