"""`search_transcripts`: one bounded, deadline-capped search over raw transcripts (spec §4).

Both engines give the same lines in the same order (newest file first, then line order); only
those lines are decoded, into hits with a redacted snippet.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest
from memoryd.base.secrets import redact_secrets
from memoryd.transcripts.folders import folders_for_cwd
from memoryd.transcripts.grep import scan
from memoryd.transcripts.grep.files import Found, Transcript, transcripts
from memoryd.transcripts.grep.pattern import compile_pattern
from memoryd.transcripts.grep.ripgrep import Ripgrep, RipgrepRefused

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GrepHit:
    session_id: str
    file: str
    line: int
    timestamp: str
    role: str
    snippet: str


@dataclass
class GrepResult:
    pattern: str
    regex: bool
    scope: str  # "project" or "all"
    results: list[GrepHit] = field(default_factory=list)
    truncated: bool = False
    reason: str = ""  # why truncated: "limit" or "deadline"
    files_scanned: int = 0  # files whose lines the results reflect (newest first)
    bytes_scanned: int = 0  # their sizes

    @property
    def count(self) -> int:
        return len(self.results)


def json_strings(value: Any) -> Iterator[str]:
    """Every string inside a parsed JSON value, depth first (message content holds text at any depth)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from json_strings(v)


def _snippet(text: str, regex: re.Pattern[bytes]) -> str | None:
    """About GREP_SNIPPET_CHARS around the first match in `text`, whitespace collapsed, or None."""
    data = text.encode("utf-8", "replace")
    m = regex.search(data)
    if m is None:
        return None
    half = max(0, (limits.GREP_SNIPPET_CHARS - (m.end() - m.start())) // 2)
    lo, hi = max(0, m.start() - half), min(len(data), m.end() + half)
    body = " ".join(data[lo:hi].decode("utf-8", "ignore").split())
    return ("…" if lo > 0 else "") + body[: limits.GREP_SNIPPET_CHARS] + ("…" if hi < len(data) else "")


def _hit(path: Path, line_no: int, raw: bytes, regex: re.Pattern[bytes]) -> GrepHit:
    """Decode one matching line; the snippet comes from the message's text when the match is there."""
    obj: dict[str, Any] = {}
    try:
        parsed = json.loads(raw)
        obj = parsed if isinstance(parsed, dict) else {}
    except (ValueError, RecursionError):
        pass
    message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    snippet = None
    for text in json_strings(message.get("content") if message else obj.get("content")):
        snippet = _snippet(text, regex)
        if snippet is not None:
            break
    if snippet is None:
        line = raw.decode("utf-8", "replace")
        snippet = _snippet(line, regex) or line[: limits.GREP_SNIPPET_CHARS]
    return GrepHit(
        session_id=str(obj.get("sessionId") or path.stem),
        file=str(path),
        line=line_no,
        timestamp=str(obj.get("timestamp") or ""),
        role=str((message or {}).get("role") or obj.get("type") or ""),
        snippet=redact_secrets(snippet),
    )


def _on_ripgrep(
    ripgrep: Ripgrep,
    rg_pattern: str,
    files: list[Transcript],
    max_hits: int,
    remaining: Callable[[], float],
    builtin: Callable[[int, int], Generator[Found | None, None, None]],
) -> Generator[Found | None, None, None]:
    """rg's lines; if rg refuses the search, the built-in scanner's for the files rg did not cover."""
    found = 0
    try:
        for item in ripgrep.scan(rg_pattern, files, max_hits, remaining):
            yield item
            found += 1
    except RipgrepRefused as exc:
        log.warning("ripgrep refused a transcript search (%s); using the built-in scanner", str(exc)[:200])
        yield from builtin(exc.start, max_hits - found)


def search_transcripts(
    roots: list[Path],
    pattern: str,
    *,
    cwd: str | None = None,
    regex: bool = False,
    ignore_case: bool = False,
    limit: int = limits.GREP_DEFAULT_RESULTS,
    deadline_seconds: float = limits.GREP_DEADLINE_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    ripgrep: Ripgrep | None = None,
) -> GrepResult:
    """Search the transcripts of the project at `cwd` (or all with cwd=None) on `ripgrep`, or on
    the built-in scanner when None; raises InvalidPattern/InvalidRequest (400) for bad input."""
    if not 1 <= limit <= limits.GREP_MAX_RESULTS:
        raise InvalidRequest(f"limit must be between 1 and {limits.GREP_MAX_RESULTS}; got {limit}.")
    compiled = compile_pattern(pattern, regex=regex, ignore_case=ignore_case)
    result = GrepResult(pattern=pattern, regex=regex, scope="project" if cwd else "all")
    stop_at = clock() + deadline_seconds
    files = transcripts(folders_for_cwd(roots, cwd))

    def builtin(start: int = 0, max_hits: int = limit + 1) -> Generator[Found | None, None, None]:
        return scan.scan(compiled, files, max_hits, lambda: clock() >= stop_at, start=start)

    lines = (
        builtin()
        if ripgrep is None
        else _on_ripgrep(ripgrep, compiled.rg, files, limit + 1, lambda: stop_at - clock(), builtin)
    )
    last, taken = len(files) - 1, -1  # the last file the results reflect; the file of the latest hit
    try:
        for item in lines:
            if item is None or clock() >= stop_at:
                result.truncated, result.reason = True, "deadline"
                last = taken
                break
            index, line_no, raw = item
            if len(result.results) >= limit:
                result.truncated, result.reason, last = True, "limit", index
                break
            result.results.append(_hit(files[index].path, line_no, raw, compiled.regex))
            taken = index
    finally:
        lines.close()
    result.files_scanned = last + 1
    result.bytes_scanned = sum(t.size for t in files[: last + 1])
    return result
