"""FastAPI dependencies: each route asks for the one service it needs, never for the whole daemon.

A memory dir is resolved from `cwd` inside the route, once, after FastAPI has validated the whole
request (a sub-dependency would run before the body and query are checked)."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Callable

from fastapi import Depends, Request

from memoryd.api.web.views import WebView
from memoryd.daemon import Daemon
from memoryd.dream import DreamService
from memoryd.extract import ExtractionService
from memoryd.extract.backfill import Backfill
from memoryd.hooks import HookService
from memoryd.metrics import Metrics
from memoryd.recall import RecallService
from memoryd.review import ReviewQueue
from memoryd.session_memory import SessionMemory
from memoryd.stale import StaleChecker
from memoryd.status import DaemonStatus
from memoryd.store import StoreRegistry
from memoryd.team import TeamService
from memoryd.transcripts.grep import search_transcripts
from memoryd.turns import TurnEnds


def get_daemon(request: Request) -> Daemon:
    daemon: Daemon = request.app.state.daemon
    return daemon


def get_web(request: Request) -> WebView:
    """The web view's pages take this one service (`api/web/views.py`)."""
    daemon = get_daemon(request)
    return WebView(stores=daemon.stores, dream=daemon.dream, review=daemon.review, stale=daemon.stale, extraction=daemon.extraction,
                   session_memory=daemon.session_memory, recall_log=daemon.recall.recall_log, activity=daemon.activity, meter=daemon.meter,
                   llm=daemon.llm, model=daemon.settings.llm.model, read_only=daemon.settings.memory.read_only, clock=daemon.clock)


def get_stores(request: Request) -> StoreRegistry:
    return get_daemon(request).stores


def get_turns(request: Request) -> TurnEnds:
    return get_daemon(request).turns


def get_hooks(request: Request) -> HookService:
    return get_daemon(request).hooks


def get_extraction(request: Request) -> ExtractionService:
    return get_daemon(request).extraction


def get_dream(request: Request) -> DreamService:
    return get_daemon(request).dream


def get_recall(request: Request) -> RecallService:
    return get_daemon(request).recall


def get_review(request: Request) -> ReviewQueue:
    return get_daemon(request).review


def get_stale(request: Request) -> StaleChecker:
    return get_daemon(request).stale


def get_team(request: Request) -> TeamService:
    return get_daemon(request).team


def get_backfill(request: Request) -> Backfill:
    return get_daemon(request).backfill


def get_session_memory(request: Request) -> SessionMemory:
    return get_daemon(request).session_memory


def get_status(request: Request) -> DaemonStatus:
    return get_daemon(request).status


def get_metrics(request: Request) -> Metrics:
    return get_daemon(request).metrics


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
WebViewDep = Annotated[WebView, Depends(get_web)]


def get_transcript_search(request: Request) -> Callable[..., Any]:
    """`search_transcripts` over the daemon's transcript roots, on ripgrep when found."""
    daemon = get_daemon(request)
    return functools.partial(search_transcripts, daemon.settings.transcript_roots, ripgrep=daemon.ripgrep)


TranscriptSearchDep = Annotated[Callable[..., Any], Depends(get_transcript_search)]
