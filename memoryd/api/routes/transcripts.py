"""GET /v1/transcripts/search: grep-only search over raw transcripts (spec §4)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memoryd.api.deps import TranscriptSearchDep
from memoryd.api.models import Cwd, SearchOut
from memoryd.base import limits

router = APIRouter(tags=["transcripts"])


@router.get("/v1/transcripts/search")
def search(
    search_transcripts: TranscriptSearchDep,
    q: Annotated[str, Query(description="A narrow literal term, or a regex with regex=true.")] = "",
    cwd: Annotated[Cwd | None, Query(description="Search this project's transcripts; omit to search all.")] = None,
    limit: Annotated[
        int, Query(description=f"Max results, 1..{limits.GREP_MAX_RESULTS}.")
    ] = limits.GREP_DEFAULT_RESULTS,
    regex: Annotated[
        bool,
        Query(
            description="Treat q as a regex in the grep dialect (what ripgrep and Python re read alike; see `memoryd "
            "grep --help` or docs/extraction.md)."
        ),
    ] = False,
    ignore_case: Annotated[bool, Query(description="Case-insensitive match.")] = False,
) -> SearchOut:
    """Matching transcript lines with session id, line, timestamp, role and a snippet."""
    return SearchOut.model_validate(search_transcripts(q, cwd=cwd, regex=regex, ignore_case=ignore_case, limit=limit))
