"""GET /v1/transcripts/search: grep-only search over raw transcripts (spec §4)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from memoryd import limits
from memoryd.api.deps import DaemonDep
from memoryd.transcripts.grep import search_transcripts

router = APIRouter(tags=["transcripts"])


@router.get("/v1/transcripts/search")
def search(
    daemon: DaemonDep,
    q: str = Query("", description="A narrow literal term, or a regex with regex=true."),
    cwd: str | None = Query(None, description="Search this project's transcripts; omit to search all."),
    limit: int = Query(limits.GREP_DEFAULT_RESULTS, description=f"Max results, 1..{limits.GREP_MAX_RESULTS}."),
    regex: bool = Query(False, description="Treat q as a regex in the grep dialect (what ripgrep and Python re read alike; see README)."),
    ignore_case: bool = Query(False, description="Case-insensitive match."),
) -> dict[str, Any]:
    """Matching transcript lines with session id, line, timestamp, role and a snippet."""
    return search_transcripts(
        daemon.settings.transcript_roots, q, cwd=cwd, regex=regex, ignore_case=ignore_case, limit=limit,
        ripgrep=daemon.ripgrep,
    ).as_dict()
