"""FastAPI dependencies: each route asks for the one service it needs, never for the whole `Services`.

A memory dir is resolved from `cwd` inside the route, once, after FastAPI has validated the whole
request (a sub-dependency would run before the body and query are checked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, Request

from memoryd.api.services import Services
from memoryd.api.web.views import WebView
from memoryd.base.metrics import Metrics
from memoryd.dream import DreamService
from memoryd.extract import ExtractionService
from memoryd.extract.backfill import Backfill
from memoryd.extract.turns import TurnEnds
from memoryd.integrations.claude_code_hooks import HookService
from memoryd.recall import RecallService
from memoryd.review import ReviewQueue
from memoryd.service.status import DaemonStatus
from memoryd.session_memory import SessionMemory
from memoryd.stale import StaleChecker
from memoryd.store import StoreRegistry
from memoryd.team import TeamService


def services(request: Request) -> Services:
    """What `create_app` was given; the getters below hand a route one field of it."""
    given: Services = request.app.state.services
    return given


def get_stores(request: Request) -> StoreRegistry:
    return services(request).stores


def get_turns(request: Request) -> TurnEnds:
    return services(request).turns


def get_hooks(request: Request) -> HookService:
    return services(request).hooks


def get_extraction(request: Request) -> ExtractionService:
    return services(request).extraction


def get_dream(request: Request) -> DreamService:
    return services(request).dream


def get_recall(request: Request) -> RecallService:
    return services(request).recall


def get_review(request: Request) -> ReviewQueue:
    return services(request).review


def get_stale(request: Request) -> StaleChecker:
    return services(request).stale


def get_team(request: Request) -> TeamService:
    return services(request).team


def get_backfill(request: Request) -> Backfill:
    return services(request).backfill


def get_session_memory(request: Request) -> SessionMemory:
    return services(request).session_memory


def get_status(request: Request) -> DaemonStatus:
    return services(request).status


def get_metrics(request: Request) -> Metrics:
    return services(request).metrics


def get_transcript_search(request: Request) -> Callable[..., Any]:
    """`search_transcripts` over the daemon's transcript roots, on ripgrep when found."""
    return services(request).transcript_search


def get_web(request: Request) -> WebView:
    """The web view's pages take this one service (`api/web/views.py`)."""
    return services(request).web


StoresDep = Annotated[StoreRegistry, Depends(get_stores)]
TurnsDep = Annotated[TurnEnds, Depends(get_turns)]
HooksDep = Annotated[HookService, Depends(get_hooks)]
ExtractionDep = Annotated[ExtractionService, Depends(get_extraction)]
DreamDep = Annotated[DreamService, Depends(get_dream)]
RecallDep = Annotated[RecallService, Depends(get_recall)]
ReviewDep = Annotated[ReviewQueue, Depends(get_review)]
StaleDep = Annotated[StaleChecker, Depends(get_stale)]
TeamDep = Annotated[TeamService, Depends(get_team)]
BackfillDep = Annotated[Backfill, Depends(get_backfill)]
SessionNotesDep = Annotated[SessionMemory, Depends(get_session_memory)]
StatusDep = Annotated[DaemonStatus, Depends(get_status)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
TranscriptSearchDep = Annotated[Callable[..., Any], Depends(get_transcript_search)]
WebViewDep = Annotated[WebView, Depends(get_web)]
