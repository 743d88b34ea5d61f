"""Grep-only search over raw transcripts, the third memory layer (spec §4).

Files are streamed in binary chunks; matching works on bytes and only matching lines are
decoded. Patterns that would match everything, or could backtrack for ever, are refused.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from memoryd import limits
from memoryd.errors import InvalidPattern, InvalidRequest
from memoryd.store.paths import project_root, sanitize_path
from memoryd.store.secrets import redact_secrets

# Lines any sane narrow pattern should not all match; a pattern matching all of them is catch-all.
_CATCH_ALL_PROBES = ("hello world", "0123456789", "{}[]();,", "ZZZ QQQ")
# A group with a quantifier inside, itself quantified: `(a+)+`, `(\w*)*`, `(x|y+){2,}`.
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*(?:[+*]|\{\d*,)")


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
    files_scanned: int = 0
    bytes_scanned: int = 0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["count"] = len(self.results)
        return data


def compile_pattern(pattern: str, *, regex: bool, ignore_case: bool = False) -> re.Pattern[bytes]:
    """Validate a search pattern and compile it to a bytes regex; refuse catch-all and unsafe ones."""
    text = (pattern or "").strip() if not regex else (pattern or "")
    if not text.strip():
        raise InvalidPattern("q is empty: pass a narrow term, e.g. q=ConnectionResetError.")
    if len(text) > limits.GREP_PATTERN_MAX_CHARS:
        raise InvalidPattern(f"q is {len(text)} chars; keep it at most {limits.GREP_PATTERN_MAX_CHARS}.")
    if not regex:
        if len(text) < limits.GREP_MIN_TERM_CHARS:
            raise InvalidPattern(
                f"q {text!r} is too short to be useful: use a term of at least {limits.GREP_MIN_TERM_CHARS} characters."
            )
        source = re.escape(text.encode("utf-8"))
    else:
        if _NESTED_QUANTIFIER.search(text):
            raise InvalidPattern(
                "q has a nested quantifier such as (a+)+ that can backtrack for ever: remove the inner or outer repeat."
            )
        source = text.encode("utf-8")
    try:
        compiled = re.compile(source, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise InvalidPattern(f"q is not a valid regex ({exc}): fix it or search literally with regex=false.") from None
    if regex:
        probes = [p.encode() for p in _CATCH_ALL_PROBES]
        if compiled.search(b"") is not None:
            raise InvalidPattern(
                f"q {text!r} matches the empty string, so it matches every line: make it require text, e.g. 'timeout\\w+'."
            )
        if all(compiled.search(p) for p in probes) or any(compiled.fullmatch(c) for c in (b"a", b"Z", b"0", b" ")):
            raise InvalidPattern(
                f"q {text!r} is catch-all (it matches almost any text): name a word that occurs in the lines you want."
            )
    return compiled


def project_dirs(roots: list[Path], cwd: str | None) -> list[Path]:
    """Transcript folders of one project (`sanitize_path(root)` or it + '-...'), or every folder."""
    dirs: list[Path] = []
    prefix = sanitize_path(str(project_root(cwd))) if cwd else None
    for root in roots:
        if not root.is_dir():
            continue
        for child in sorted(root.iterdir()):
            if not child.is_dir():
                continue
            if prefix is None or child.name == prefix or child.name.startswith(prefix + "-"):
                dirs.append(child)
    return dirs


def transcript_files(dirs: list[Path]) -> list[Path]:
    """Every .jsonl under the folders, newest first (recent sessions are the likelier answer)."""
    files: list[tuple[float, Path]] = []
    for d in dirs:
        for path in d.rglob("*.jsonl"):
            try:
                files.append((path.stat().st_mtime, path))
            except OSError:
                continue
    files.sort(key=lambda t: (-t[0], str(t[1])))
    return [p for _, p in files]


class _Finder:
    """Find the next match in a chunk: bytes.find for literals (lowered chunk for ASCII -i), else the regex."""

    def __init__(self, compiled: re.Pattern[bytes], literal: bytes | None, lower: bool) -> None:
        self.compiled, self.literal, self.lower = compiled, literal, lower

    def haystack(self, buf: bytes) -> bytes:
        return buf.lower() if self.lower else buf

    def find(self, hay: bytes, pos: int, end: int) -> int:
        if self.literal is not None:
            return hay.find(self.literal, pos, end)
        m = self.compiled.search(hay, pos, end)
        return -1 if m is None else m.start()


def _count_lines(fd: int, start: int, stop: int) -> int:
    """Newlines in the file between two offsets (only done up to a match, so narrow searches skip it)."""
    n = 0
    while start < stop:
        data = os.pread(fd, min(limits.GREP_CHUNK_BYTES, stop - start), start)
        if not data:
            break
        n += data.count(b"\n")
        start += len(data)
    return n


def _matching_lines(path: Path, finder: _Finder) -> Iterator[tuple[int, bytes, int]]:
    """(line number, line bytes, bytes read so far) per matching line; chunked unbuffered reads.

    Each chunk ends at its last newline and the next read starts right after it, so no line is
    split and nothing is copied twice. Line numbers are counted lazily, only up to matches.
    """
    known_off, known_line = 0, 1  # a file offset whose line number is known
    pos = 0
    size = limits.GREP_CHUNK_BYTES
    with path.open("rb", buffering=0) as fh:
        fd = fh.fileno()
        while True:
            buf = os.pread(fd, size, pos)
            if not buf:
                return
            last = len(buf) < size
            end = len(buf) if last else buf.rfind(b"\n") + 1
            if end == 0:  # a line longer than the chunk: read more of it, up to the cap
                if size < limits.GREP_LINE_MAX_BYTES:
                    size *= 2
                    continue
                end = len(buf)  # giant line: search this much of it, then move on
            hay = finder.haystack(buf)
            at = finder.find(hay, 0, end)
            while at >= 0:
                start = buf.rfind(b"\n", 0, at) + 1
                stop = buf.find(b"\n", at, end)
                stop = end if stop < 0 else stop
                if known_off < pos:
                    known_line += _count_lines(fd, known_off, pos)
                    known_off = pos
                known_line += buf.count(b"\n", known_off - pos, start)
                known_off = pos + start
                yield known_line, buf[start:stop], pos + end
                at = finder.find(hay, stop + 1, end) if stop + 1 < end else -1
            pos += end
            size = limits.GREP_CHUNK_BYTES
            if last:
                return


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)


def _snippet(text: str, compiled: re.Pattern[bytes], width: int) -> str | None:
    str_pattern = re.compile(compiled.pattern.decode("utf-8", "replace"), compiled.flags & re.IGNORECASE)
    m = str_pattern.search(text)
    if m is None:
        return None
    half = max(0, (width - (m.end() - m.start())) // 2)
    lo, hi = max(0, m.start() - half), min(len(text), m.end() + half)
    body = " ".join(text[lo:hi].split())
    return ("…" if lo > 0 else "") + body + ("…" if hi < len(text) else "")


def _hit(path: Path, line_no: int, raw: bytes, compiled: re.Pattern[bytes]) -> GrepHit:
    """Decode one matching line; the snippet comes from the message's text when the match is there."""
    line = raw.decode("utf-8", "replace")
    obj: dict[str, Any] = {}
    try:
        parsed = json.loads(line)
        obj = parsed if isinstance(parsed, dict) else {}
    except ValueError:
        pass
    message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    texts: list[str] = []
    _strings(message.get("content") if message else obj.get("content"), texts)
    snippet = None
    for text in texts:
        snippet = _snippet(text, compiled, limits.GREP_SNIPPET_CHARS)
        if snippet is not None:
            break
    if snippet is None:
        snippet = _snippet(line, compiled, limits.GREP_SNIPPET_CHARS) or line[: limits.GREP_SNIPPET_CHARS]
    return GrepHit(
        session_id=str(obj.get("sessionId") or path.stem),
        file=str(path),
        line=line_no,
        timestamp=str(obj.get("timestamp") or ""),
        role=str((message or {}).get("role") or obj.get("type") or ""),
        snippet=redact_secrets(snippet),
    )


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
) -> GrepResult:
    """Search the transcripts of the project at `cwd` (or all with cwd=None); bounded and deadline-capped."""
    if not 1 <= limit <= limits.GREP_MAX_RESULTS:
        raise InvalidRequest(f"limit must be between 1 and {limits.GREP_MAX_RESULTS}; got {limit}.")
    compiled = compile_pattern(pattern, regex=regex, ignore_case=ignore_case)
    term = pattern.strip()
    ascii_lower = ignore_case and not regex and term.isascii()
    literal = None if regex or (ignore_case and not ascii_lower) else (term.lower() if ascii_lower else term).encode("utf-8")
    finder = _Finder(compiled, literal, ascii_lower)
    result = GrepResult(pattern=pattern, regex=regex, scope="project" if cwd else "all")
    stop_at = clock() + deadline_seconds
    for path in transcript_files(project_dirs(roots, cwd)):
        if clock() >= stop_at:
            result.truncated, result.reason = True, "deadline"
            break
        result.files_scanned += 1
        read = 0
        try:
            for line_no, raw, read in _matching_lines(path, finder):
                if len(result.results) >= limit:
                    result.truncated, result.reason = True, "limit"
                    break
                result.results.append(_hit(path, line_no, raw, compiled))
                if clock() >= stop_at:
                    result.truncated, result.reason = True, "deadline"
                    break
            else:
                read = path.stat().st_size
        except OSError:
            continue
        result.bytes_scanned += read
        if result.truncated:
            break
    return result
