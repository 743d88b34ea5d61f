"""`Services`: what the HTTP layer is given. The composition root fills it; a route asks `api/deps.py`
for one of its fields, so nothing in `api/` reaches the daemon itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoryd.api.web.views import WebView
from memoryd.base.clock import Clock
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


@dataclass(frozen=True, kw_only=True)
class Services:
    """The parts the app serves, one field each; the app's own wiring (auth, hosts, sessions) reads the first four."""

    token: str  # the bearer token every endpoint but /v1/health needs
    host: str  # server.host: which Host and Origin headers are this daemon's own
    metrics: Metrics
    clock: Clock
    stores: StoreRegistry
    turns: TurnEnds
    hooks: HookService
    extraction: ExtractionService
    dream: DreamService
    recall: RecallService
    review: ReviewQueue
    stale: StaleChecker
    team: TeamService
    backfill: Backfill
    session_memory: SessionMemory
    status: DaemonStatus
    transcript_search: Callable[..., Any]  # `search_transcripts` bound to the transcript roots and the grep engine
    web: WebView
