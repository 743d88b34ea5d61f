"""Transcript search: scoping, bounds, chunk edges, snippets, hostile patterns, API and CLI."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from memoryd import limits
from memoryd.errors import InvalidPattern, InvalidRequest
from memoryd.grep_scan import FileScan, Plan, Scanner, choose_anchor, choose_probe, fold_table, scan_unit
from memoryd.store.paths import project_root, sanitize_path
from memoryd.transcripts import grep as grep_mod
from memoryd.transcripts.grep import _regex_outruns_find, compile_pattern, plan_search, required_literal, search_transcripts
from memoryd.transcripts.grep_pool import GrepPool, work_units


def _line(session: str, role: str, text: str, ts: str = "2026-01-02T03:04:05Z") -> str:
    return json.dumps({"type": role, "sessionId": session, "timestamp": ts, "message": {"role": role, "content": [{"type": "text", "text": text}]}}, ensure_ascii=False)


def _write(folder: Path, session: str, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def roots(home: Path, project: Path, tmp_path: Path) -> list[Path]:
    root = home / "transcripts"
    mine = sanitize_path(str(project_root(str(project))))
    _write(root / mine, "s-main", [_line("s-main", "user", "why does the flaky ConnectionResetError happen"), _line("s-main", "assistant", "plain answer")])
    _write(root / f"{mine}-worktree", "s-wt", [_line("s-wt", "assistant", "fixed ConnectionResetError by retrying")])
    _write(root / f"{mine}x", "s-sibling", [_line("s-sibling", "user", "ConnectionResetError in a sibling project")])
    _write(root / "-other", "s-other", [_line("s-other", "user", "ConnectionResetError elsewhere")])
    return [root]


def test_project_scope_includes_worktree_folders_but_not_siblings(roots: list[Path], project: Path) -> None:
    result = search_transcripts(roots, "ConnectionResetError", cwd=str(project))
    assert sorted(h.session_id for h in result.results) == ["s-main", "s-wt"]
    assert result.scope == "project" and not result.truncated


def test_all_scope_searches_every_folder(roots: list[Path]) -> None:
    result = search_transcripts(roots, "ConnectionResetError")
    assert sorted(h.session_id for h in result.results) == ["s-main", "s-other", "s-sibling", "s-wt"]


def test_hit_fields(roots: list[Path], project: Path) -> None:
    hit = next(h for h in search_transcripts(roots, "flaky", cwd=str(project)).results)
    assert (hit.session_id, hit.line, hit.role, hit.timestamp) == ("s-main", 1, "user", "2026-01-02T03:04:05Z")
    assert hit.snippet == "why does the flaky ConnectionResetError happen"


def test_limit_edges(home: Path, project: Path) -> None:
    root = home / "transcripts"
    folder = root / sanitize_path(str(project_root(str(project))))
    n = limits.GREP_MAX_RESULTS + 1
    _write(folder, "big", [_line("big", "user", f"needle number {i}") for i in range(n)])
    at_max = search_transcripts([root], "needle", cwd=str(project), limit=limits.GREP_MAX_RESULTS)
    assert len(at_max.results) == limits.GREP_MAX_RESULTS and at_max.truncated and at_max.reason == "limit"
    default = search_transcripts([root], "needle", cwd=str(project))
    assert len(default.results) == limits.GREP_DEFAULT_RESULTS and default.truncated
    exact = search_transcripts([root], "needle number 100", cwd=str(project), limit=1)
    assert len(exact.results) == 1 and not exact.truncated and exact.results[0].line == n
    with pytest.raises(InvalidRequest):
        search_transcripts([root], "needle", limit=limits.GREP_MAX_RESULTS + 1)
    with pytest.raises(InvalidRequest):
        search_transcripts([root], "needle", limit=0)


def test_lines_across_chunk_boundaries(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny chunks: every line spans chunks, line numbers must stay exact."""
    monkeypatch.setattr(limits, "GREP_CHUNK_BYTES", 7)
    root = home / "transcripts"
    lines = [_line("c", "user", "filler text") for _ in range(50)]
    lines[17] = _line("c", "user", "the needle-in-17")
    lines[42] = _line("c", "assistant", "the needle-in-42")
    _write(root / "-p", "c", lines)
    result = search_transcripts([root], "needle-in")
    assert [(h.line, h.role) for h in result.results] == [(18, "user"), (43, "assistant")]


def test_file_without_trailing_newline_and_non_json(home: Path) -> None:
    root = home / "transcripts"
    (root / "-p").mkdir(parents=True)
    (root / "-p" / "raw.jsonl").write_bytes(b"not json but has zebra123 inside\n\xff\xfe bad utf8 zebra123")
    result = search_transcripts([root], "zebra123")
    assert [h.line for h in result.results] == [1, 2]
    assert result.results[0].session_id == "raw"


def test_snippet_is_bounded_and_redacted(home: Path) -> None:
    root = home / "transcripts"
    secret = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 6
    long_text = "x" * 5000 + " marker-term " + secret + " " + "y" * 5000
    _write(root / "-p", "s", [_line("s", "user", long_text)])
    hit = search_transcripts([root], "marker-term").results[0]
    assert len(hit.snippet) <= limits.GREP_SNIPPET_CHARS + 2
    assert secret not in hit.snippet and "sk-ant" not in hit.snippet
    plain = "x" * 5000 + " marker-term " + "y" * 5000
    _write(root / "-p", "s", [_line("s", "user", plain)])
    hit = search_transcripts([root], "marker-term").results[0]
    assert "marker-term" in hit.snippet and len(hit.snippet) <= limits.GREP_SNIPPET_CHARS + 2


def test_regex_and_ignore_case(roots: list[Path]) -> None:
    assert len(search_transcripts(roots, r"Connection\w+Error", regex=True).results) == 4
    assert len(search_transcripts(roots, "connectionreseterror", ignore_case=True).results) == 4
    assert search_transcripts(roots, "connectionreseterror").results == []


@pytest.mark.parametrize(
    "pattern, regex",
    [("", False), ("   ", False), ("ab", False), (".*", True), (".", True), (r"\w*", True), ("a?", True), ("(|x)", True),
     (r"\w+", True), (r"[\s\S]", True), ("(a+)+$", True), (r"(\w*)*x", True), ("(x|y+){2,}", True), ("[unclosed", True),
     ("x" * (limits.GREP_PATTERN_MAX_CHARS + 1), False)],
)
def test_hostile_patterns_refused(pattern: str, regex: bool) -> None:
    with pytest.raises(InvalidPattern) as info:
        compile_pattern(pattern, regex=regex)
    assert info.value.status == 400 and info.value.code == "invalid_pattern"


def test_edge_lengths_accepted() -> None:
    compile_pattern("x" * limits.GREP_MIN_TERM_CHARS, regex=False)
    compile_pattern("x" * limits.GREP_PATTERN_MAX_CHARS, regex=False)
    compile_pattern(r"timeout\w+", regex=True)


def test_deadline_returns_partial_flagged(roots: list[Path]) -> None:
    ticks = iter(range(1000))
    result = search_transcripts(roots, "ConnectionResetError", deadline_seconds=1.5, clock=lambda: float(next(ticks)))
    assert result.truncated and result.reason == "deadline"
    assert 0 < len(result.results) < 4


def test_api_search_and_errors(live, roots: list[Path], project: Path) -> None:  # type: ignore[no-untyped-def]
    r = live.client.get("/v1/transcripts/search", params={"q": "ConnectionResetError", "cwd": str(project)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == 2 and {h["session_id"] for h in body["results"]} == {"s-main", "s-wt"}
    r = live.client.get("/v1/transcripts/search", params={"q": ".*", "regex": "true"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_pattern"
    r = live.client.get("/v1/transcripts/search", params={"q": "needle", "limit": limits.GREP_MAX_RESULTS + 1})
    assert r.status_code == 400 and "limit" in r.json()["error"]["message"]
    r = live.client.get("/v1/transcripts/search", params={"q": "ConnectionResetError", "cwd": "relative/path"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_cwd"


def test_module_never_reads_whole_files() -> None:
    import memoryd.grep_scan
    import memoryd.transcripts.grep_pool

    for module in (grep_mod, memoryd.grep_scan, memoryd.transcripts.grep_pool):
        source = Path(module.__file__ or "").read_text()
        assert ".read_bytes()" not in source and ".read_text()" not in source and ".readlines()" not in source
        assert ".read()" not in source


def test_worker_module_imports_only_the_stdlib_and_limits() -> None:
    """Spawned workers import memoryd.grep_scan: it must stay small to start fast."""
    import subprocess
    import sys

    code = "import sys, memoryd.grep_scan; print(sorted(m for m in sys.modules if m.startswith('memoryd')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['memoryd', 'memoryd.grep_scan', 'memoryd.limits']"


def test_line_longer_than_cap_is_searched_in_pieces(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "GREP_CHUNK_BYTES", 16)
    monkeypatch.setattr(limits, "GREP_LINE_MAX_BYTES", 64)
    root = home / "transcripts"
    (root / "-p").mkdir(parents=True)
    (root / "-p" / "g.jsonl").write_bytes(b"early-needle " + b"x" * 500 + b"\nshort line late-needle\n")
    assert [h.line for h in search_transcripts([root], "early-needle").results] == [1]
    assert [h.line for h in search_transcripts([root], "late-needle").results] == [2]


def test_ascii_ignore_case_literal_and_unicode_term(home: Path) -> None:
    root = home / "transcripts"
    _write(root / "-p", "u", [_line("u", "user", "Größe des Caches"), _line("u", "user", "MiXeD CaSe TeRm")])
    assert [h.line for h in search_transcripts([root], "mixed case term", ignore_case=True).results] == [2]
    assert [h.line for h in search_transcripts([root], "größe", ignore_case=True).results] == [1]
    assert [h.line for h in search_transcripts([root], "Größe").results] == [1]


# --- fast paths: rare-byte prefilter, translate table, regex prefilter, worker pool ----------------

_WORDS = ("zebra", "Zebra", "ZEBRA", "Timeout", "timeout", "42", "4", "größe", "GRÖSSE", "Größe", "bob", "bz", "z", "b",
          "the", "parser", "fails", "Error", "error", "{x}", "ZebraTimeout4", "ZebraTimeout42", "zEbRaTiMeOuT42",
          "größe-zebra", "GRÖßE-ZEBRA", "Größe-Zebra", "zebra\\u00e9", "ZebraxOut7", "zebraout77", "ZeraOut1")
# (name, pattern, regex, ignore_case): literal, folded literal, non-ASCII folded term, regex with a
# required literal, without one, with alternation, anchored at both ends, case-insensitive regex.
_CASES = [
    ("literal", "ZebraTimeout42", False, False),
    ("icase", "zebratimeout42", False, True),
    ("icase-nonascii", "größe-zebra", False, True),
    ("regex-literal", r"Zebra\w+Out\d+", True, False),
    ("regex-no-literal", r"Ze?b?r[a-z]?Out\d+", True, False),
    ("regex-alternation", r"ZebraTimeout42|zebraout77", True, False),
    ("regex-group-alternation", r"(?:zebra|bob)\s+Timeout", True, False),
    ("regex-common-literal", r'"text": "[^"]*ZEBRA \d', True, False),
    ("regex-anchor-start", r'^\{"type": "user".*ZebraTimeout4', True, False),
    ("regex-anchor-end", r'ZEBRA\w*"\}\]\}\}$', True, True),
    ("regex-icase", r"ZEBRA\w+42", True, True),
    ("regex-inline-icase", r"(?i)zebraout\d", True, False),
]


def _corpus(root: Path, seed: int = 11) -> None:
    """Transcript folders with fixed mtimes; lines long and short, needles in every case, a file
    without a trailing newline, and bytes ('z', 'b', 'Z') common enough to defeat the rare-byte scan."""
    rng = random.Random(seed)
    for f in range(7):
        folder = root / f"-proj{f % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for n in range(rng.randint(5, 120)):
            words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 60)))
            lines.append(_line(f"s{f}", "user" if n % 3 else "assistant", words, ts=f"2026-01-0{f % 9 + 1}T00:00:{n % 60:02d}Z"))
        path = folder / f"s{f}.jsonl"
        path.write_text("\n".join(lines) + ("" if f == 3 else "\n"), encoding="utf-8")
        os.utime(path, (1_700_000_000 + f * 10, 1_700_000_000 + f * 10))


def _reference(root: Path, pattern: str, regex: bool, ignore_case: bool, limit: int) -> tuple[list[tuple[str, int]], bool]:
    """What a plain per-line regex search gives: (session, line) pairs, newest file first, and truncated."""
    source = pattern.encode() if regex else re.escape(pattern.strip().encode())
    rx = re.compile(source, (re.IGNORECASE if ignore_case else 0) | re.MULTILINE)
    files = sorted(root.rglob("*.jsonl"), key=lambda p: (-p.stat().st_mtime, str(p)))
    hits: list[tuple[str, int]] = []
    for path in files:
        for n, line in enumerate(path.read_bytes().split(b"\n"), 1):
            if line and rx.search(line):
                if len(hits) == limit:
                    return hits, True
                hits.append((path.stem, n))
    return hits, False


@pytest.fixture(scope="module")
def pool() -> Iterator[GrepPool]:
    p = GrepPool()
    yield p
    p.close()


@pytest.mark.parametrize("chunk", [61, limits.GREP_CHUNK_BYTES])
@pytest.mark.parametrize("name, pattern, regex, icase", _CASES, ids=[c[0] for c in _CASES])
def test_pool_and_in_process_match_a_plain_line_search(
    tmp_path: Path, pool: GrepPool, monkeypatch: pytest.MonkeyPatch, chunk: int, name: str, pattern: str, regex: bool, icase: bool
) -> None:
    monkeypatch.setattr(limits, "GREP_CHUNK_BYTES", chunk)  # 61: nearly every line spans chunks
    monkeypatch.setattr(limits, "GREP_POOL_UNIT_BYTES", 20_000)  # several units, several files per unit
    root = tmp_path / "t"
    _corpus(root)
    limit = limits.GREP_MAX_RESULTS
    expected, truncated = _reference(root, pattern, regex, icase, limit)
    assert expected, f"the corpus must contain matches for {name}"
    here = search_transcripts([root], pattern, regex=regex, ignore_case=icase, limit=limit, deadline_seconds=600)
    pooled = search_transcripts([root], pattern, regex=regex, ignore_case=icase, limit=limit, deadline_seconds=600, pool=pool, pool_min_bytes=0)
    assert pool.started
    assert [(h.session_id, h.line) for h in here.results] == expected
    assert here.truncated == truncated
    assert pooled.results == here.results and (pooled.truncated, pooled.reason, pooled.files_scanned) == (here.truncated, here.reason, here.files_scanned)


@pytest.mark.parametrize("limit", [1, 3, 17])
def test_limit_truncation_is_the_same_on_both_paths(tmp_path: Path, pool: GrepPool, monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr(limits, "GREP_POOL_UNIT_BYTES", 5_000)
    root = tmp_path / "t"
    _corpus(root)
    expected, truncated = _reference(root, "zebra", False, True, limit)
    assert truncated
    here = search_transcripts([root], "zebra", ignore_case=True, limit=limit)
    pooled = search_transcripts([root], "zebra", ignore_case=True, limit=limit, pool=pool, pool_min_bytes=0)
    assert [(h.session_id, h.line) for h in here.results] == expected
    assert pooled.results == here.results
    assert (here.truncated, here.reason) == (pooled.truncated, pooled.reason) == (True, "limit")


def test_tiny_deadline_truncates_on_both_paths(tmp_path: Path, pool: GrepPool) -> None:
    root = tmp_path / "t"
    _corpus(root)
    for kwargs in ({}, {"pool": pool, "pool_min_bytes": 0}):
        result = search_transcripts([root], "zebra", deadline_seconds=1e-9, **kwargs)  # type: ignore[arg-type]
        assert result.truncated and result.reason == "deadline" and result.results == []


def test_worker_unit_stops_at_deadline_and_at_max_hits(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _corpus(root)
    paths = sorted(str(p) for p in root.rglob("*.jsonl"))
    plan = Plan(literal=b"zebra", fold=True)
    assert scan_unit(plan, paths, 100, 0.0) == [FileScan([], 0, "deadline")]
    scans = scan_unit(plan, paths, 2, 600.0)
    assert sum(len(s.hits) for s in scans) == 2 and scans[-1].status == "hits" and len(scans) < len(paths)


def test_small_searches_never_start_the_pool(roots: list[Path]) -> None:
    fresh = GrepPool()
    try:
        result = search_transcripts(roots, "ConnectionResetError", pool=fresh)
        assert len(result.results) == 4 and not fresh.started
    finally:
        fresh.close()


def test_closed_pool_scans_in_process(roots: list[Path]) -> None:
    closed = GrepPool()
    closed.close()
    result = search_transcripts(roots, "ConnectionResetError", pool=closed, pool_min_bytes=0)
    assert len(result.results) == 4 and not closed.started


def test_work_units_batch_small_files_in_order() -> None:
    files = [(Path(f"f{i}"), size) for i, size in enumerate([1, 2, 10, 1, 1, 1, 30, 1])]
    assert work_units(files, 4) == [[Path("f0"), Path("f1"), Path("f2")], [Path("f3"), Path("f4"), Path("f5"), Path("f6")], [Path("f7")]]
    assert work_units([], 4) == []


def _positions(hay: bytes, needle: bytes) -> list[int]:
    out, i = [], hay.find(needle)
    while i >= 0:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_translate_table_finds_exactly_the_case_folded_matches(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = bytes(range(256)) if seed % 2 else b"aAbBzZ?\x00\x3f\x7f\xff-"
    needle = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 4))).lower()
    hay = bytearray(rng.choice(alphabet) for _ in range(20_000))
    for i in range(0, len(hay) - 8, 997):  # plant the needle in mixed case
        hay[i:i + len(needle)] = bytes(c ^ 32 if rng.random() < 0.5 and chr(c).isalpha() and c < 128 else c for c in needle)
    table = fold_table(needle)
    filler = next(b for b in table if b not in needle)
    assert all(b == filler or b in needle for b in table)
    assert _positions(bytes(hay).translate(table), needle) == _positions(bytes(hay).lower(), needle)


def test_translate_table_filler_is_outside_the_needle_even_when_it_holds_every_lowered_byte() -> None:
    needle = bytes(b for b in range(256) if b != 0x3F and not 65 <= b <= 90)  # every lowered byte but '?'
    assert set(fold_table(needle)) - set(needle) == {0x3F}
    full = bytes(b for b in range(256) if not 65 <= b <= 90)
    assert set(fold_table(full)) == set(full)  # every byte folds onto a needle byte: no filler needed
    hay = bytes(range(256)) * 4
    assert _positions(hay.translate(fold_table(b"a?z")), b"a?z") == _positions(hay.lower(), b"a?z")
    hay = b"xx A?Z a?z A?z" * 3
    assert _positions(hay.translate(fold_table(b"a?z")), b"a?z") == [3, 7, 11, 17, 21, 25, 31, 35, 39]


def _scan(tmp_path: Path, data: bytes, plan: Plan) -> list[tuple[int, bytes]]:
    path = tmp_path / "edge.jsonl"
    path.write_bytes(data)
    scan = Scanner(plan).scan_file(str(path), 1000, lambda: False)
    assert scan.status == "done"
    return scan.hits


@pytest.mark.parametrize("anchor", [None, (0, "xX"), (1, "qQ"), (2, "7"), (4, "zZ")])
@pytest.mark.parametrize("chunk", [8, 16, 33, 4096])
def test_literal_scan_at_chunk_edges_mixed_case_and_non_ascii(tmp_path: Path, anchor: tuple[int, str] | None, chunk: int) -> None:
    lines = [b"Xq7Kz", b"aaxq7kzbb", b"", b"x" * 40 + b"XQ7KZ", b"xq7k", b"\xc3\xb6xQ7kZ\xc3\xb6", b"q7kz" * 9, b"xq7kz"]
    data = b"\n".join(lines)  # no trailing newline: the last line still counts
    at, variants = anchor or (0, "")
    anchors = tuple(ord(c) for c in variants)
    folded = Plan(literal=b"xq7kz", fold=True, anchors=anchors, anchor_at=at, chunk_bytes=chunk)
    assert _scan(tmp_path, data, folded) == [(i + 1, line) for i, line in enumerate(lines) if b"xq7kz" in line.lower()]
    exact = Plan(literal=b"Xq7Kz", anchors=anchors[-1:], anchor_at=at, chunk_bytes=chunk)
    assert _scan(tmp_path, data, exact) == ([(1, b"Xq7Kz")] if not anchors or chr(anchors[-1]) in "Xq7Kz" else [])


def test_common_anchor_byte_falls_back_to_find(tmp_path: Path) -> None:
    """The anchor byte is everywhere (a bad sample): the scan switches to find and misses nothing."""
    lines = [b"z" * 5000 + (b" zebra42" if i % 7 == 0 else b"") for i in range(40)]
    data = b"\n".join(lines) + b"\n"
    plan = Plan(literal=b"zebra42", anchors=(ord("z"),), anchor_at=0)
    assert [n for n, _ in _scan(tmp_path, data, plan)] == [i + 1 for i in range(40) if i % 7 == 0]
    folded = Plan(literal=b"zebra42", fold=True, anchors=(ord("z"), ord("Z")), anchor_at=0)
    assert [n for n, _ in _scan(tmp_path, data.upper(), folded)] == [i + 1 for i in range(40) if i % 7 == 0]


@pytest.mark.parametrize("chunk", [8, 16, 33, 4096])
def test_folded_literal_found_by_its_letter_free_run_at_chunk_edges(tmp_path: Path, chunk: int) -> None:
    """-i literal `t10:99 at 2026-03-04x`, found untranslated by ` 2026-03-04`: false leads (the run
    without the letters), mixed case, a match at the very end without a newline, and non-ASCII."""
    lit = b"t10:99 at 2026-03-04x"
    assert choose_probe(lit, True, b"nothing like it " * 500) == (b" 2026-03-04", 9)
    lines = [b"T10:99 AT 2026-03-04X", b"t10:98 at 2026-03-04x", b"\xc3\xb6 t10:99 At 2026-03-04xx", b"at 2026-03-04x",
             b" 2026-03-04" * 5, b"", b"zz" * 20 + b"T10:99 aT 2026-03-04X", b"t10:99 at 2026-03-04", b"T10:99 AT 2026-03-04X"]
    data = b"\n".join(lines)
    plan = Plan(literal=lit, fold=True, probe=b" 2026-03-04", probe_at=9, chunk_bytes=chunk)
    assert _scan(tmp_path, data, plan) == [(i + 1, line) for i, line in enumerate(lines) if lit in line.lower()]


def test_misleading_probe_falls_back_to_the_translated_find(tmp_path: Path) -> None:
    """The run is on every line (a bad sample): the scan drops the probe and misses nothing."""
    lines = [b" 2026-03-04 " + (b"T10:99 at 2026-03-04X" if i % 13 == 0 else b"at 2026-03-04") for i in range(3000)]
    path = tmp_path / "common.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    scanner = Scanner(Plan(literal=b"t10:99 at 2026-03-04x", fold=True, probe=b" 2026-03-04", probe_at=9))
    hits = scanner.scan_file(str(path), 1000, lambda: False).hits
    assert [n for n, _ in hits] == [i + 1 for i in range(3000) if i % 13 == 0]
    assert scanner.literal is not None and scanner.literal.probe == b""


def test_choose_probe_takes_a_long_rare_letter_free_run_or_nothing() -> None:
    sample = b"the parser fails 2026-01-01T00:00:00Z " * 50
    assert choose_probe(b"zebra 4242-77 now", True, sample) == (b" 4242-77 ", 5)
    assert choose_probe(b"zebra 4242-77 now", False, sample) == (b"", 0)  # case-sensitive: find the literal
    assert choose_probe(b"zebra 42 now", True, sample) == (b"", 0)  # run too short for a fast find
    assert choose_probe(b"x 2026-01-01t00", True, sample) == (b"", 0)  # run common in the sample
    assert choose_probe(b"4242-77", True, sample) == (b"4242-77", 0)  # no letters at all: no translation
    assert choose_probe(b"zebratimeout", True, sample) == (b"", 0)


def test_regex_starting_with_a_rare_literal_is_searched_bare() -> None:
    """sre's C prefix loop beats `find` of a 3-byte literal when the prefix's first byte is rare;
    a regex that starts with a class cannot use it, so its literal prefilter stays."""
    rng = random.Random(3)
    sample = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz \n") for _ in range(limits.GREP_SAMPLE_BYTES))
    assert _regex_outruns_find(re.compile(rb"Qzx\w+e\d"), b"Qzx", sample)
    assert not _regex_outruns_find(re.compile(rb"\w+qzx\d"), b"qzx", sample)
    plan = plan_search(re.compile(rb"Qzx\w+e\d"), r"Qzx\w+e\d", regex=True, ignore_case=False, sample=sample)
    assert (plan.literal, plan.anchors) == (b"Qzx", (ord("Q"),))  # memchr on an absent byte beats both
    some_q = sample.replace(b"a", b"Q", 200)  # 'Q' in 1 of ~1300 bytes: too common for memchr, rare for sre
    plan = plan_search(re.compile(rb"Qzx\w+e\d"), r"Qzx\w+e\d", regex=True, ignore_case=False, sample=some_q)
    assert (plan.literal, plan.regex) == (None, rb"Qzx\w+e\d")
    assert not _regex_outruns_find(re.compile(rb"Qzx\w+e\d"), b"Qzx", sample[:100])  # too small to time


def test_regex_whose_literal_is_on_every_line_switches_to_the_bare_regex(tmp_path: Path) -> None:
    lines = [_line("s", "user", f"retry the flag {'ZEBRA 7' if i % 97 == 5 else 'zebra'} now").encode() for i in range(2000)]
    data = b"\n".join(lines) + b"\n"
    source = rb'"text": "[^"]*ZEBRA \d'
    scanner = Scanner(Plan(literal=b'"text": "', regex=source))
    path = tmp_path / "common.jsonl"
    path.write_bytes(data)
    hits = scanner.scan_file(str(path), 1000, lambda: False).hits
    assert [n for n, _ in hits] == [i + 1 for i in range(2000) if i % 97 == 5]
    assert not scanner.prefilter  # it gave up on the literal after too many lines failed the regex


def test_choose_anchor_picks_the_rarest_byte_or_none() -> None:
    sample = b"the parser fails ZZZZ 2026-01-01T00:00:00Z " * 50
    assert choose_anchor(b"ZebraTimeout42", False, sample) == ((ord("b"),), 2)
    assert choose_anchor(b"zebratimeout42", True, sample) == ((ord("4"),), 12)  # as rare as 'b', and no case
    assert choose_anchor(b"zebratime", True, sample) == ((ord("b"), ord("B")), 2)
    assert choose_anchor(b"the", False, sample) == ((), 0)  # every byte common
    assert choose_anchor(b"abc", False, b"") == ((), 0)


@pytest.mark.parametrize(
    "pattern, literal",
    [(r"Zebra\w+Error\d+", b"Zebra"), (r"\d+Timeout", b"Timeout"), (r"^abc$", b"abc"), (r"(?:abcd)ef", b"abcdef"),
     (r"ab", None), (r"foo|barbaz", None), (r"(?:fails|flag)\s+zebra", b"zebra"), (r"x|yyy", None), (r"x(foo|bar)yzw", b"yzw"), (r"abc*", None), (r"abcd?e", b"abc"), (r"[a]bc", b"abc"),
     (r"größe", "größe".encode())],
)
def test_required_literal(pattern: str, literal: bytes | None) -> None:
    assert required_literal(re.compile(pattern.encode())) == literal


def test_plan_lowers_the_literal_for_case_insensitive_regexes() -> None:
    for pattern, flags in ((r"ZEBRA\w+", re.IGNORECASE), (r"(?i)ZEBRA\w+", 0)):
        plan = plan_search(re.compile(pattern.encode(), flags), pattern, regex=True, ignore_case=bool(flags), sample=b"")
        assert (plan.literal, plan.fold, plan.regex) == (b"zebra", True, pattern.encode())
    plain = plan_search(re.compile(re.escape(b"Zebra")), "Zebra", regex=False, ignore_case=False, sample=b"")
    assert (plain.literal, plain.fold, plain.regex) == (b"Zebra", False, None)


def test_daemon_owns_one_lazy_pool(live, roots: list[Path]) -> None:  # type: ignore[no-untyped-def]
    pool_ = live.daemon.grep_pool
    assert isinstance(pool_, GrepPool) and not pool_.started
    r = live.client.get("/v1/transcripts/search", params={"q": "ConnectionResetError"})
    assert r.status_code == 200 and r.json()["count"] == 4 and not pool_.started


def _kill_workers(p: GrepPool) -> None:
    import signal

    for pid in p.warm():  # the pool's own worker processes, started by this test
        os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_idle_workers_exit_and_the_next_search_starts_new_ones(tmp_path: Path) -> None:
    import time

    root = tmp_path / "t"
    _corpus(root)
    expected = search_transcripts([root], "zebra", ignore_case=True, limit=50)
    p = GrepPool(idle_seconds=0.3)
    try:
        pids = p.warm()
        assert pids and all(_alive(pid) for pid in pids)
        assert search_transcripts([root], "zebra", ignore_case=True, limit=50, pool=p, pool_min_bytes=0).results == expected.results
        give_up = time.monotonic() + 10
        while (p.started or any(_alive(pid) for pid in pids)) and time.monotonic() < give_up:
            time.sleep(0.05)
        assert not p.started and not any(_alive(pid) for pid in pids)
        assert search_transcripts([root], "zebra", ignore_case=True, limit=50, pool=p, pool_min_bytes=0).results == expected.results
        assert p.started and not set(p.warm()) & set(pids)  # fresh worker processes
    finally:
        p.close()


def test_a_dead_worker_costs_nothing_but_time(tmp_path: Path) -> None:
    """A killed worker breaks the executor: that search finishes in-process with the same hits,
    the next one starts fresh workers, and pools that keep dying are given up for in-process scans."""
    root = tmp_path / "t"
    _corpus(root)
    expected = search_transcripts([root], "zebra", ignore_case=True, limit=50)
    p = GrepPool()
    try:
        _kill_workers(p)
        assert search_transcripts([root], "zebra", ignore_case=True, limit=50, pool=p, pool_min_bytes=0).results == expected.results
        assert not p.started  # the broken executor was dropped
        assert search_transcripts([root], "zebra", ignore_case=True, limit=50, pool=p, pool_min_bytes=0).results == expected.results
        assert p.started  # a fresh executor served that search
        for _ in range(limits.GREP_POOL_MAX_BREAKS):  # breaks in a row
            _kill_workers(p)
            assert search_transcripts([root], "zebra", ignore_case=True, limit=50, pool=p, pool_min_bytes=0).results == expected.results
        assert p.warm() == []  # given up: no more processes
        assert search_transcripts([root], "zebra", ignore_case=True, limit=50, pool=p, pool_min_bytes=0).results == expected.results
        assert not p.started
    finally:
        p.close()


def test_concurrent_searches_share_one_pool(tmp_path: Path, pool: GrepPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The route runs searches on several threads at once; each gets its own, complete answer."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(limits, "GREP_POOL_UNIT_BYTES", 5_000)
    root = tmp_path / "t"
    _corpus(root)
    queries = [(name, pattern, regex, icase) for name, pattern, regex, icase in _CASES] * 2
    expected = {q: search_transcripts([root], q[1], regex=q[2], ignore_case=q[3], limit=100).results for q in queries}

    def run(q: tuple[str, str, bool, bool]) -> tuple[tuple[str, str, bool, bool], list[Any]]:
        return q, search_transcripts([root], q[1], regex=q[2], ignore_case=q[3], limit=100, pool=pool, pool_min_bytes=0).results

    with ThreadPoolExecutor(max_workers=6) as threads:
        for q, results in threads.map(run, queries):
            assert results == expected[q], q[0]
