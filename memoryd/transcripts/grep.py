"""Grep-only search over raw transcripts, the third memory layer (spec §4).

Files are streamed in binary chunks (`memoryd.grep_scan`, in-process or on `GrepPool` workers);
matching works on bytes and only matching lines are decoded. Patterns that would match
everything, or could backtrack for ever, are refused.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from re import _parser as _sre_parse  # type: ignore[attr-defined]  # finds the literal a regex requires
from typing import Any, Callable, Generator, Iterator

from memoryd import limits
from memoryd.errors import InvalidPattern, InvalidRequest
from memoryd.grep_scan import FileScan, Plan, choose_anchor, choose_probe, scan_here
from memoryd.store.paths import project_root, sanitize_path
from memoryd.store.secrets import redact_secrets
from memoryd.transcripts.grep_pool import GrepPool
from memoryd.transcripts.ripgrep import Ripgrep, RipgrepRefused, rust_pattern

log = logging.getLogger(__name__)

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
    return [p for p, _ in _newest_first(dirs)]


def _newest_first(dirs: list[Path]) -> list[tuple[Path, int]]:
    """(path, size) of every .jsonl under the folders, newest first."""
    files: list[tuple[float, Path, int]] = []
    for d in dirs:
        for path in d.rglob("*.jsonl"):
            try:
                st = path.stat()
            except OSError:
                continue
            files.append((st.st_mtime, path, st.st_size))
    files.sort(key=lambda t: (-t[0], str(t[1])))
    return [(p, size) for _, p, size in files]


def _sample(files: list[tuple[Path, int]]) -> bytes:
    """The first bytes of the newest transcripts, to judge how rare each byte of a literal is."""
    parts: list[bytes] = []
    want = limits.GREP_SAMPLE_BYTES
    for path, _ in files:
        if want <= 0:
            break
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            data = os.pread(fd, want, 0)
        except OSError:
            data = b""
        finally:
            os.close(fd)
        parts.append(data)
        want -= len(data)
    return b"\n".join(parts)


def required_literal(compiled: re.Pattern[bytes]) -> bytes | None:
    """The longest run of plain characters in the regex's top-level sequence (>= 3 bytes), which
    every match must contain. The top level is a concatenation, so a branch in it (a flattened
    `(?:a|b)`) only ends a run; a pattern that is one alternation has no literal."""
    if compiled.flags & re.LOCALE:
        return None
    try:
        parsed = _sre_parse.parse(compiled.pattern, compiled.flags)
    except Exception:  # the parser's internals differ between versions: no prefilter then
        return None
    best, run = b"", bytearray()
    for op, av in parsed.data:
        if op is _sre_parse.LITERAL and isinstance(av, int) and 0 <= av < 256:
            run.append(av)
            continue
        best = max(best, bytes(run), key=len)
        run.clear()
    best = max(best, bytes(run), key=len)
    return best if len(best) >= limits.GREP_MIN_TERM_CHARS else None


def plan_search(compiled: re.Pattern[bytes], term: str, *, regex: bool, ignore_case: bool, sample: bytes) -> Plan:
    """How to scan: a plain literal (ASCII case folded for -i), or the regex confirmed on lines
    that contain its required literal, or the bare regex; plus the literal's rarest byte."""
    fold = bool(compiled.flags & re.IGNORECASE)
    if not regex and (not ignore_case or term.isascii()):
        literal: bytes | None = term.encode("utf-8")
        source: bytes | None = None
    else:  # a regex, or a non-ASCII term matched case-insensitively by the regex engine
        literal, source = required_literal(compiled), compiled.pattern
    chunk, line_max = limits.GREP_CHUNK_BYTES, limits.GREP_LINE_MAX_BYTES
    if literal is None:
        return Plan(regex=source, flags=compiled.flags, chunk_bytes=chunk, line_max_bytes=line_max)
    if fold:
        literal = literal.lower()
    anchors, at = choose_anchor(literal, fold, sample)
    if source is not None and not fold and not anchors and _regex_outruns_find(compiled, literal, sample):
        return Plan(regex=source, flags=compiled.flags, chunk_bytes=chunk, line_max_bytes=line_max)
    probe, probe_at = choose_probe(literal, fold, sample)
    return Plan(literal=literal, fold=fold, regex=source, flags=compiled.flags, anchors=anchors, anchor_at=at,
                probe=probe, probe_at=probe_at, chunk_bytes=chunk, line_max_bytes=line_max)


def _regex_outruns_find(compiled: re.Pattern[bytes], literal: bytes, sample: bytes) -> bool:
    """Whether the bare regex scans the sample faster than `find` of its required literal does
    (asked only when no byte of the literal is rare enough for memchr, which beats both).

    A regex that starts with a literal whose first byte is rare is searched by sre's own C prefix
    loop, which beats `find` of a short literal; most others are far slower bare."""
    if len(sample) < limits.GREP_SAMPLE_BYTES // 4:  # too little to time: keep the literal
        return False
    regex = re.compile(compiled.pattern, compiled.flags | re.MULTILINE)

    def bare() -> None:
        for _ in regex.finditer(sample):
            pass

    def literal_find() -> None:
        i = sample.find(literal)
        while i >= 0:
            i = sample.find(literal, sample.find(b"\n", i) + 1 or len(sample))

    return _best_time(bare) * limits.GREP_BARE_REGEX_MARGIN < _best_time(literal_find)


def _best_time(fn: Callable[[], None], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


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
    snippet = None
    for text in json_strings(message.get("content") if message else obj.get("content")):
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


def _ripgrep_scans(
    ripgrep: Ripgrep, pattern: str, compiled: re.Pattern[bytes], files: list[tuple[Path, int]], max_hits: int,
    remaining: Callable[[], float], fallback: Callable[[list[tuple[Path, int]]], Generator[tuple[Path | None, FileScan], None, None]],
) -> Generator[tuple[Path | None, FileScan], None, None]:
    """ripgrep's scans; if rg refuses the search, the Python scanner does the files not yet returned."""
    done = 0
    scans = ripgrep.scan(pattern, compiled, files, max_hits, remaining=remaining)
    try:
        for path, scan in scans:
            done += path is not None
            yield path, scan
        return
    except RipgrepRefused as exc:
        log.warning("ripgrep refused a transcript search (%s); using the built-in scanner", str(exc)[:200])
    finally:
        scans.close()
    yield from fallback(files[done:])


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
    pool: GrepPool | None = None,
    pool_min_bytes: int | None = None,
    ripgrep: Ripgrep | None = None,
) -> GrepResult:
    """Search the transcripts of the project at `cwd` (or all with cwd=None); bounded and deadline-capped.

    Searches over at least `pool_min_bytes` (default `GREP_POOL_MIN_BYTES`) run on `ripgrep`
    when given (and the pattern has a ripgrep equivalent), else on `pool`'s worker processes;
    smaller ones here. Every path gives the same hits in the same order (newest file first,
    then line order)."""
    if not 1 <= limit <= limits.GREP_MAX_RESULTS:
        raise InvalidRequest(f"limit must be between 1 and {limits.GREP_MAX_RESULTS}; got {limit}.")
    compiled = compile_pattern(pattern, regex=regex, ignore_case=ignore_case)
    result = GrepResult(pattern=pattern, regex=regex, scope="project" if cwd else "all")
    stop_at = clock() + deadline_seconds
    files = _newest_first(project_dirs(roots, cwd))
    threshold = limits.GREP_POOL_MIN_BYTES if pool_min_bytes is None else pool_min_bytes
    big = bool(files) and sum(size for _, size in files) >= threshold

    def remaining() -> float:
        return stop_at - clock()

    def python_scans(rest: list[tuple[Path, int]]) -> Generator[tuple[Path | None, FileScan], None, None]:
        plan = plan_search(compiled, pattern.strip(), regex=regex, ignore_case=ignore_case, sample=_sample(files))
        if pool is not None and big:
            return pool.scan(plan, rest, limit + 1, remaining=remaining)
        return scan_here(plan, [p for p, _ in rest], lambda: limit - len(result.results) + 1, lambda: clock() >= stop_at)

    rg_pattern = rust_pattern(compiled) if ripgrep is not None and big else None
    scans = (
        _ripgrep_scans(ripgrep, rg_pattern, compiled, files, limit + 1, remaining, python_scans)
        if ripgrep is not None and rg_pattern is not None
        else python_scans(files)
    )
    try:
        while True:
            if clock() >= stop_at:
                result.truncated, result.reason = True, "deadline"
                break
            path, scan = next(scans, (None, None))
            if scan is None:
                break
            if path is None:  # the pool gave up waiting: deadline
                result.truncated, result.reason = True, "deadline"
                break
            result.files_scanned += 1
            for line_no, raw in scan.hits:
                if len(result.results) >= limit:
                    result.truncated, result.reason = True, "limit"
                    break
                result.results.append(_hit(path, line_no, raw, compiled))
                if clock() >= stop_at:
                    result.truncated, result.reason = True, "deadline"
                    break
            result.bytes_scanned += scan.bytes_read  # 0 for an unreadable file
            if not result.truncated and scan.status == "deadline":
                result.truncated, result.reason = True, "deadline"
            if result.truncated:
                break
    finally:
        scans.close()  # the pool cancels units not started yet
    return result
