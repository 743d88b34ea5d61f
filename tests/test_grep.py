"""Transcript search on the built-in scanner: scoping, bounds, chunk edges, snippets, the dialect, symlinks, API."""

from __future__ import annotations

import functools
import itertools
import json
import os
import random
import re
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.base.errors import InvalidPattern, InvalidRequest
from memoryd.store.paths import project_root, sanitize_path
from memoryd.transcripts.grep import compile_pattern, search_transcripts


def _line(session: str, role: str, text: str, ts: str = "2026-01-02T03:04:05Z") -> str:
    return json.dumps(
        {
            "type": role,
            "sessionId": session,
            "timestamp": ts,
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        },
        ensure_ascii=False,
    )


def _write(folder: Path, session: str, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def roots(home: Path, project: Path, tmp_path: Path) -> list[Path]:
    root = home / "transcripts"
    mine = sanitize_path(str(project_root(str(project))))
    _write(
        root / mine,
        "s-main",
        [
            _line("s-main", "user", "why does the flaky ConnectionResetError happen"),
            _line("s-main", "assistant", "plain answer"),
        ],
    )
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
    [
        ("", False),
        ("   ", False),
        ("ab", False),
        (".*", True),
        (".", True),
        (r"\w*", True),
        ("a?", True),
        ("(|x)", True),
        (r"\w+", True),
        (r"[\s\S]", True),
        ("(a+)+$", True),
        (r"(\w*)*x", True),
        ("(x|y+){2,}", True),
        ("[unclosed", True),
        ("x" * (limits.GREP_PATTERN_MAX_CHARS + 1), False),
    ],
)
def test_hostile_patterns_refused(pattern: str, regex: bool) -> None:
    with pytest.raises(InvalidPattern) as info:
        compile_pattern(pattern, regex=regex)
    assert info.value.status == 400 and info.value.code == "invalid_pattern"


def test_edge_lengths_accepted() -> None:
    compile_pattern("x" * limits.GREP_MIN_TERM_CHARS, regex=False)
    compile_pattern("x" * limits.GREP_PATTERN_MAX_CHARS, regex=False)
    compile_pattern(r"timeout\w+", regex=True)


def test_deadline_returns_a_flagged_prefix_of_the_full_answer(home: Path) -> None:
    root = home / "transcripts"
    for f in range(6):
        path = _write(root / f"-p{f}", f"s{f}", [_line(f"s{f}", "user", f"needle {f}-{i}") for i in range(3)])
        os.utime(path, (1_700_000_000 + f, 1_700_000_000 + f))
    full = search_transcripts([root], "needle", limit=100)
    assert len(full.results) == 18 and not full.truncated and full.files_scanned == 6
    partial_counts = set()
    for deadline in range(2, 40, 3):  # the clock ticks once per look: the deadline falls mid-search
        clock = functools.partial(next, itertools.count(0.0))
        part = search_transcripts([root], "needle", limit=100, deadline_seconds=deadline, clock=clock)
        if part.truncated:
            assert part.reason == "deadline" and part.results == full.results[: len(part.results)]
            assert part.files_scanned <= 6 and part.bytes_scanned <= full.bytes_scanned
            partial_counts.add(len(part.results))
        else:
            assert part.results == full.results
    assert 0 in partial_counts and any(0 < n < 18 for n in partial_counts)


def test_api_search_and_errors(live, roots: list[Path], project: Path) -> None:  # type: ignore[no-untyped-def]
    r = live.client.get("/v1/transcripts/search", params={"q": "ConnectionResetError", "cwd": str(project)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == 2 and {h["session_id"] for h in body["results"]} == {"s-main", "s-wt"}
    r = live.client.get("/v1/transcripts/search", params={"q": ".*", "regex": "true"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_pattern"
    r = live.client.get("/v1/transcripts/search", params={"q": r"(?<=x)Error", "regex": "true"})
    assert (
        r.status_code == 400
        and "(?:...)" in r.json()["error"]["message"]
        and "regex=false" in r.json()["error"]["message"]
    )
    r = live.client.get("/v1/transcripts/search", params={"q": "needle", "limit": limits.GREP_MAX_RESULTS + 1})
    assert r.status_code == 400 and "limit" in r.json()["error"]["message"]
    r = live.client.get("/v1/transcripts/search", params={"q": "ConnectionResetError", "cwd": "relative/path"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_cwd"


def test_package_never_reads_whole_files_and_uses_no_private_re_internals() -> None:
    import memoryd.transcripts.grep as package

    folder = Path(package.__file__ or "").parent
    for path in folder.glob("*.py"):
        source = path.read_text()
        assert ".read_bytes()" not in source and ".read_text()" not in source and ".readlines()" not in source, path
        assert ".read()" not in source and "re._parser" not in source and "sre_" not in source, path
    assert not list(Path(folder.parent.parent).glob("grep*.py"))  # nothing grep-like at the top level of memoryd/


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


# --- the dialect: what both engines read alike ---------------------------------------------


@pytest.mark.parametrize(
    "pattern, hint",
    [
        (r"(?<=a)bcd", "(?:...)"),
        (r"(?P<n>abc)", "(?:...)"),
        (r"abc(?=d)", "(?:...)"),
        (r"(?s)abc", "(?:...)"),
        (r"(abc)\1", "backreferences"),
        (r"abc\Z", "use $"),
        (r"\Aabc", "use ^"),
        (r"abc\n", "newline"),
        (r"\p{L}bc", "ASCII classes"),
        (r"abc++", "possessive"),
        (r"abc{,3}", "{0,m}"),
        (r"ab{c", r"\{"),
        (r"[[:alpha:]]x", r"\["),
        (r"[a&&b]xyz", "set syntax"),
        (r"[é]xyz", "(?:é|è)"),
        (r"é+xyz", "(?:é)+"),
        (r"abc)", r"\)"),
        (r"(abc", "unclosed"),
        (r"[abc", "unclosed"),
        (r"\x4gabc", "hex"),
        (r"a{2000}b", "up to"),
        (r"a{5,2}b", "low to high"),
        (r"^*abc", "cannot repeat"),
        (r"[\w-z]abc", "bad range"),
        ("abc\\", "lone backslash"),
    ],
)
def test_patterns_outside_the_dialect_are_refused_with_the_fix(pattern: str, hint: str) -> None:
    with pytest.raises(InvalidPattern) as info:
        compile_pattern(pattern, regex=True)
    assert info.value.status == 400 and hint in str(info.value) and "regex=false" in str(info.value)


@pytest.mark.parametrize(
    "pattern, rg, literal",
    [
        (r"Timeout\w+Error", r"(?-u)Timeout(?:\w)+Error", b"Timeout"),
        (r"(?i)a.b?CDE", r"(?i-u)a.(?:b)?CDE", b"cde"),
        (r"x(?:Y|z)+qqq", r"(?-u)x(?:(?:Y|z))+qqq", b"qqq"),
        (r"[^\]\-]+\$", r"(?-u)(?:[^\x5d\x2d])+\x24", None),
        (r"\bwörd\B", r"(?-u)\bw\xc3\xb6rd\B", "wörd".encode()),
        (r"ab|cde", r"(?-u)ab|cde", None),
        (r"abcd?e", r"(?-u)abc(?:d)?e", b"abc"),
        (r"[]a-c\d]{2,5}?x\t", r"(?-u)(?:[\x5da-c\d]){2,5}?x\x09", None),
        (r"\<tag\>", r"(?-u)\x3ctag\x3e", b"<tag>"),  # rg reads \< as a word start: sent as a byte
        ("größe", "(?-u)gr\\xc3\\xb6\\xc3\\x9fe", "größe".encode()),
    ],
)
def test_dialect_translation_and_required_literal(pattern: str, rg: str, literal: bytes | None) -> None:
    compiled = compile_pattern(pattern, regex=True)
    assert (compiled.rg, compiled.literal) == (rg, literal)


def test_literal_terms_are_bytes_for_rg_and_lowered_for_ignore_case() -> None:
    exact = compile_pattern("a.b (c) ZZ", regex=False)
    assert (exact.rg, exact.literal, exact.exact) == (r"(?-u)a\x2eb \x28c\x29 ZZ", b"a.b (c) ZZ", True)
    folded = compile_pattern("MiXeD", regex=False, ignore_case=True)
    assert (folded.rg, folded.literal) == ("(?i-u)MiXeD", b"mixed")


# --- symlinks: never followed out of (or within) the transcript roots ------------------------


def test_symlinks_inside_a_root_are_never_followed(home: Path, tmp_path: Path) -> None:
    root = home / "transcripts"
    _write(root / "-p", "real", [_line("real", "user", "inside-needle here")])
    outside = tmp_path / "outside"
    secret = _write(outside, "secret", [_line("secret", "user", "outside-needle token")])
    (root / "-p" / "link.jsonl").symlink_to(secret)  # a file link
    (root / "-p" / "sub").symlink_to(outside, target_is_directory=True)  # a folder link under a project folder
    (root / "-linked-project").symlink_to(outside, target_is_directory=True)  # a linked project folder
    assert search_transcripts([root], "outside-needle").results == []
    assert search_transcripts([root], "outside-needle", cwd="/").results == []
    assert [h.session_id for h in search_transcripts([root], "inside-needle").results] == ["real"]
    assert search_transcripts([root], "needle").files_scanned == 1


# --- the built-in scanner against a plain per-line search -----------------------------------

_WORDS = (
    "zebra",
    "Zebra",
    "ZEBRA",
    "Timeout",
    "timeout",
    "42",
    "4",
    "größe",
    "GRÖSSE",
    "Größe",
    "bob",
    "bz",
    "z",
    "b",
    "the",
    "parser",
    "fails",
    "Error",
    "error",
    "{x}",
    "ZebraTimeout4",
    "ZebraTimeout42",
    "zEbRaTiMeOuT42",
    "größe-zebra",
    "GRÖßE-ZEBRA",
    "Größe-Zebra",
    "zebra\\u00e9",
    "ZebraxOut7",
    "zebraout77",
    "ZeraOut1",
)
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
    """Transcript folders with fixed mtimes; lines long and short, needles in every case, and a
    file without a trailing newline."""
    rng = random.Random(seed)
    for f in range(7):
        folder = root / f"-proj{f % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for n in range(rng.randint(5, 120)):
            words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 60)))
            lines.append(
                _line(f"s{f}", "user" if n % 3 else "assistant", words, ts=f"2026-01-0{f % 9 + 1}T00:00:{n % 60:02d}Z")
            )
        path = folder / f"s{f}.jsonl"
        path.write_text("\n".join(lines) + ("" if f == 3 else "\n"), encoding="utf-8")
        os.utime(path, (1_700_000_000 + f * 10, 1_700_000_000 + f * 10))


def _reference(
    root: Path, pattern: str, regex: bool, ignore_case: bool, limit: int
) -> tuple[list[tuple[str, int]], bool]:
    """What a plain per-line Python regex search gives: (file stem, line) pairs, newest file first, and truncated."""
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


@pytest.mark.parametrize("chunk", [61, limits.GREP_CHUNK_BYTES])
@pytest.mark.parametrize("name, pattern, regex, icase", _CASES, ids=[c[0] for c in _CASES])
def test_builtin_scanner_matches_a_plain_line_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, name: str, pattern: str, regex: bool, icase: bool
) -> None:
    monkeypatch.setattr(limits, "GREP_CHUNK_BYTES", chunk)  # 61: nearly every line spans chunks
    root = tmp_path / "t"
    _corpus(root)
    expected, truncated = _reference(root, pattern, regex, icase, limits.GREP_MAX_RESULTS)
    assert expected, f"the corpus must contain matches for {name}"
    here = search_transcripts(
        [root], pattern, regex=regex, ignore_case=icase, limit=limits.GREP_MAX_RESULTS, deadline_seconds=600
    )
    assert [(h.session_id, h.line) for h in here.results] == expected and here.truncated == truncated


@pytest.mark.parametrize("limit", [1, 3, 17])
def test_limit_truncation_counts_the_files_read(tmp_path: Path, limit: int) -> None:
    root = tmp_path / "t"
    _corpus(root)
    expected, truncated = _reference(root, "zebra", False, True, limit)
    result = search_transcripts([root], "zebra", ignore_case=True, limit=limit)
    assert [(h.session_id, h.line) for h in result.results] == expected and truncated
    assert (result.truncated, result.reason) == (True, "limit")
    newest = [p.stem for p in sorted(root.rglob("*.jsonl"), key=lambda p: -p.stat().st_mtime)]
    one_more, _ = _reference(root, "zebra", False, True, limit + 1)  # the line that showed the limit was reached
    assert result.files_scanned == newest.index(one_more[-1][0]) + 1 < len(newest)
