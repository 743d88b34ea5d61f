"""Transcript search on ripgrep: the same hits as the built-in scanner, its fallback, its bounds, symlinks."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.base.errors import InvalidPattern
from memoryd.service.daemon import Daemon
from memoryd.transcripts.grep import Ripgrep, RipgrepRefused, compile_pattern, find_ripgrep, search_transcripts
from memoryd.transcripts.grep.files import Transcript
from memoryd.transcripts.grep.ripgrep import batches
from tests.conftest import make_settings, serve
from tests.test_grep import _CASES, _corpus, _line, _reference, _write


@pytest.fixture(scope="module")
def rg() -> Iterator[Ripgrep]:
    found = Ripgrep.discover("auto")
    assert found is not None, (
        "ripgrep is a dependency on this platform: `pip install -e .` installs the `ripgrep` wheel"
    )
    yield found


def _search(root: Path, pattern: str, regex: bool, icase: bool, limit: int, **kwargs: object):  # type: ignore[no-untyped-def]
    return search_transcripts(
        [root], pattern, regex=regex, ignore_case=icase, limit=limit, deadline_seconds=600, **kwargs
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("name, pattern, regex, icase", _CASES, ids=[c[0] for c in _CASES])
def test_ripgrep_matches_the_builtin_scanner(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch, name: str, pattern: str, regex: bool, icase: bool
) -> None:
    monkeypatch.setattr(limits, "GREP_RIPGREP_BATCH_BYTES", 20_000)  # several rg batches
    root = tmp_path / "t"
    _corpus(root)
    expected, truncated = _reference(root, pattern, regex, icase, limits.GREP_MAX_RESULTS)
    assert expected
    here = _search(root, pattern, regex, icase, limits.GREP_MAX_RESULTS)
    fast = _search(root, pattern, regex, icase, limits.GREP_MAX_RESULTS, ripgrep=rg)
    assert [(h.session_id, h.line) for h in fast.results] == expected and fast.truncated == truncated
    assert fast.results == here.results and (fast.reason, fast.files_scanned, fast.bytes_scanned) == (
        here.reason,
        here.files_scanned,
        here.bytes_scanned,
    )


@pytest.mark.parametrize("limit", [1, 3, 17])
def test_limit_truncation_is_the_same_on_ripgrep(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(limits, "GREP_RIPGREP_BATCH_BYTES", 5_000)
    root = tmp_path / "t"
    _corpus(root)
    here = _search(root, "zebra", False, True, limit)
    fast = _search(root, "zebra", False, True, limit, ripgrep=rg)
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
    r"\b[0-9]{3}-[0-9]{4}\b",
    r"\d{3}-\d{4}",
    r"(?i)kelvin sign k",
    r"(?i)long s",
    r"and\snbsp\sthere",
    r"nbsp.there",
    r'dollar\$"\}\]\}\}$',
    r'^\{"type": "user"',
    r"gr.+e ZEBRA",
    r"(?i)GRÖßE",
    r"(?i)zebra gr",
    r"[^a-z ]{2}ße",
    r"\w+é\b",
]


@pytest.mark.parametrize("pattern", _TRICKY_PATTERNS)
def test_ripgrep_keeps_the_dialects_bytes_semantics(tmp_path: Path, rg: Ripgrep, pattern: str) -> None:
    root = tmp_path / "t"
    _write(root / "-p", "s", [_line("s", "user", text) for text in _TRICKY_LINES])
    expected, _ = _reference(root, pattern, True, False, 100)
    assert [(h.session_id, h.line) for h in _search(root, pattern, True, False, 100).results] == expected
    assert [(h.session_id, h.line) for h in _search(root, pattern, True, False, 100, ripgrep=rg).results] == expected


def test_a_binary_that_cannot_run_falls_back_to_the_builtin_scanner(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "t"
    _corpus(root)
    broken = Ripgrep(str(tmp_path / "no-such-rg"))
    with pytest.raises(RipgrepRefused, match="cannot run"):
        broken.run("(?-u)zebra", [next(root.rglob("*.jsonl"))], 5, 60)
    assert (
        _search(root, "zebra", False, True, 100, ripgrep=broken).results
        == _search(root, "zebra", False, True, 100).results
    )
    assert "ripgrep refused" in caplog.text


def test_a_pattern_rg_rejects_falls_back_to_the_builtin_scanner(tmp_path: Path, rg: Ripgrep) -> None:
    """The dialect keeps rg from refusing; were it to (here: a raw pattern), the search still answers."""
    root = tmp_path / "t"
    _corpus(root)
    with pytest.raises(RipgrepRefused, match="regex parse error"):
        rg.run("(?<=a)b", [next(root.rglob("*.jsonl"))], 5, 60)
    files = [Transcript(p, p.stat().st_size, 0.0) for p in sorted(root.rglob("*.jsonl"))]
    with pytest.raises(RipgrepRefused) as info:
        list(rg.scan("(?<=a)b", files, 5, lambda: 60.0))
    assert info.value.start == 0


def test_run_bounds_deadline_and_vanished_files(tmp_path: Path, rg: Ripgrep) -> None:
    root = tmp_path / "t"
    _corpus(root)
    paths = sorted(root.rglob("*.jsonl"))
    pattern = compile_pattern("zebra", regex=False, ignore_case=True).rg
    assert rg.run(pattern, paths, 100, 0.0) == ([], True)
    where, timed_out = rg.run(pattern, paths, 2, 60.0)
    assert not timed_out and sorted({i for i, _, _ in where}) == list(range(len(paths)))
    assert all(sum(1 for i, _, _ in where if i == k) == 2 for k in range(len(paths)))  # at most 2 lines per file
    gone = tmp_path / "gone.jsonl"
    where, _ = rg.run(pattern, [paths[0], gone, paths[1]], 1000, 60.0)  # an unreadable file is not a refusal
    assert {i for i, _, _ in where} == {0, 2}
    line_no, offset = min((n, o) for i, n, o in where if i == 0)
    assert paths[0].read_bytes()[offset:].split(b"\n", 1)[0] == paths[0].read_bytes().split(b"\n")[line_no - 1]


def test_batches_grow_and_respect_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "GREP_RIPGREP_BATCH_BYTES", 10)
    files = [Transcript(Path(f"/t/f{i}"), 4, 0.0) for i in range(20)]
    assert list(batches(files)) == [(0, 3), (3, 13), (13, 20)]  # >= 10, >= 40, then the rest
    monkeypatch.setattr(limits, "GREP_RIPGREP_ARGS_CHARS", 12)
    assert list(batches(files[:5])) == [(0, 2), (2, 4), (4, 5)]  # 6 chars per path
    big = [Transcript(Path("/t/huge"), 1000, 0.0), Transcript(Path("/t/next"), 1, 0.0)]
    assert list(batches(big)) == [(0, 1), (1, 2)]
    assert list(batches([])) == []


def test_long_matching_lines_are_cut_at_the_line_cap(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "GREP_LINE_MAX_BYTES", 1000)
    root = tmp_path / "t"
    _write(root / "-p", "s", [_line("s", "user", "x" * 50_000 + " needle"), _line("s", "user", "second needle")])
    fast = _search(root, "needle", False, False, 10, ripgrep=rg)
    assert [h.line for h in fast.results] == [1, 2]
    assert (
        fast.results[0].snippet.startswith('{"type": "user"')
        and len(fast.results[0].snippet) <= limits.GREP_SNIPPET_CHARS
    )
    assert "second needle" in fast.results[1].snippet


def test_tiny_deadline_truncates_on_ripgrep(tmp_path: Path, rg: Ripgrep) -> None:
    root = tmp_path / "t"
    _corpus(root)
    result = search_transcripts([root], "zebra", deadline_seconds=1e-9, ripgrep=rg)
    assert result.truncated and result.reason == "deadline" and result.results == []


def test_symlinks_out_of_the_root_are_skipped_on_ripgrep(home: Path, tmp_path: Path, rg: Ripgrep) -> None:
    root = home / "transcripts"
    _write(root / "-p", "real", [_line("real", "user", "inside-needle here")])
    secret = _write(tmp_path / "outside", "secret", [_line("secret", "user", "outside-needle token")])
    (root / "-p" / "link.jsonl").symlink_to(secret)
    (root / "-p" / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "-linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert search_transcripts([root], "outside-needle", ripgrep=rg).results == []
    assert [h.session_id for h in search_transcripts([root], "inside-needle", ripgrep=rg).results] == ["real"]


def test_find_ripgrep_settings(tmp_path: Path) -> None:
    assert find_ripgrep("off") is None
    assert find_ripgrep(str(tmp_path / "missing")) is None
    auto = find_ripgrep("auto")
    assert auto is not None and os.access(auto, os.X_OK)
    assert find_ripgrep(auto) == auto


def test_status_names_the_grep_engine_and_api_searches_run_on_it(home: Path) -> None:
    root = home / "transcripts"
    _corpus(root)
    expected, _ = _reference(root, "zebra", False, True, 50)
    with serve(Daemon(make_settings(home))) as live:
        grep = live.client.get("/v1/status").json()["grep"]
        assert grep["engine"] == "ripgrep" and grep["version"].startswith("ripgrep ") and grep["searches"] == 0
        found = live.client.get(
            "/v1/transcripts/search", params={"q": "zebra", "ignore_case": True, "limit": 50}
        ).json()
        assert live.client.get("/v1/status").json()["grep"]["searches"] == 1
        assert [(h["session_id"], h["line"]) for h in found["results"]] == expected
    settings = make_settings(home)
    settings.transcripts.ripgrep = "off"
    with serve(Daemon(settings)) as live:
        assert live.client.get("/v1/status").json()["grep"] == {"engine": "python", "ripgrep": None}
        off = live.client.get("/v1/transcripts/search", params={"q": "zebra", "ignore_case": True, "limit": 50}).json()
        assert off == found


_FIXTURES = Path(__file__).parent / "fixtures" / "claude-transcripts"


@pytest.mark.parametrize(
    "pattern, regex, icase",
    [
        ("tool_use", False, False),
        ("error", False, True),
        (r"\bdef \w+\(", True, False),
        (r'"name":\s*"(?:Bash|Read|Edit)"', True, False),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:", True, False),
        (r"[A-Z]{4,}_[A-Z]+", True, False),
        (r"(?i)SPOTTER/[a-z_/]+\.exs?\b", True, False),
        (r"[^\x00-\x7f]{2}", True, False),
    ],
)
def test_both_engines_agree_on_real_transcripts(
    tmp_path: Path, rg: Ripgrep, pattern: str, regex: bool, icase: bool
) -> None:
    root = tmp_path / "t"
    shutil.copytree(_FIXTURES, root / "-home-me-spotter", ignore=shutil.ignore_patterns("*.md", "*.txt"))
    expected, truncated = _reference(root, pattern, regex, icase, limits.GREP_MAX_RESULTS)
    assert expected
    here = search_transcripts([root], pattern, regex=regex, ignore_case=icase, limit=limits.GREP_MAX_RESULTS)
    fast = search_transcripts(
        [root], pattern, regex=regex, ignore_case=icase, limit=limits.GREP_MAX_RESULTS, ripgrep=rg
    )
    assert [(Path(h.file).stem, h.line) for h in here.results] == expected
    assert fast.results == here.results and fast.truncated == here.truncated == truncated


def _dialect_patterns(seed: int, n: int) -> list[str]:
    """Seeded random patterns in the dialect: pieces of real transcript lines, some runs of letters,
    digits, spaces or punctuation generalised to classes, repeats, alternations or (?i)."""
    import random
    import re

    lines = [line for p in sorted(_FIXTURES.glob("*.jsonl")) for line in p.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(seed)
    general = {
        "letters": [r"\w+", r"[A-Za-z]+", r"[a-z_]*", r".+?", r"\w{2,}"],
        "digits": [r"\d+", r"[0-9]{1,9}", r"\d*?", r"[\d.]+"],
        "space": [r"\s+", r"\s", r"(?:\s|-)", r"\W"],
        "other": [r"\W", r"[^\w\s]", r".", r"[^a-z]"],
    }
    out: list[str] = []
    while len(out) < n:
        line = rng.choice(lines)
        at = rng.randrange(max(1, len(line) - 40))
        piece = line[at : at + rng.randint(8, 40)]
        parts = []
        for m in re.finditer(r"[A-Za-z]+|\d+|\s+|.", piece):
            tok = m.group()
            kind = (
                "letters"
                if tok[0].isalpha() and tok.isascii()
                else "digits"
                if tok[0].isdigit()
                else "space"
                if tok[0].isspace()
                else "other"
            )
            if rng.random() < 0.3:
                parts.append(rng.choice(general[kind]))
            elif kind == "other" and tok.isascii():
                parts.append("\\" + tok if not tok.isalnum() else tok)
            else:
                parts.append(tok.replace("\t", r"\t"))
        pattern = "".join(parts)
        if rng.random() < 0.2:
            pattern = f"(?:{pattern}|{rng.choice(parts)}\\d)"
        if rng.random() < 0.2:
            pattern = "(?i)" + pattern.upper().replace("\\W", "\\w").replace("\\D", "\\d").replace(
                "\\S", "\\s"
            ).replace("\\B", "\\b")
        out.append(pattern)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_random_dialect_patterns_agree_on_both_engines_and_python_re(tmp_path: Path, rg: Ripgrep, seed: int) -> None:
    root = tmp_path / "t"
    shutil.copytree(_FIXTURES, root / "-home-me-spotter", ignore=shutil.ignore_patterns("*.md", "*.txt"))
    matched = refused = 0
    for pattern in _dialect_patterns(seed, 15):
        try:
            compile_pattern(pattern, regex=True)
        except InvalidPattern as exc:
            assert "catch-all" in str(exc) or "empty string" in str(exc), (pattern, str(exc))  # never a dialect refusal
            refused += 1
            continue
        expected, _ = _reference(root, pattern, True, False, limits.GREP_MAX_RESULTS)
        here = search_transcripts([root], pattern, regex=True, limit=limits.GREP_MAX_RESULTS)
        fast = search_transcripts([root], pattern, regex=True, limit=limits.GREP_MAX_RESULTS, ripgrep=rg)
        assert [(Path(h.file).stem, h.line) for h in here.results] == expected, pattern
        assert fast.results == here.results, pattern
        matched += bool(expected)
    assert matched >= 8 and refused <= 3  # most patterns find lines


def test_both_engines_read_raw_bytes_not_decoded_text(tmp_path: Path, rg: Ripgrep) -> None:
    """rg would transcode a UTF-16 file (BOM) and skip a binary one; both engines read bytes alike."""
    root = tmp_path / "t"
    (root / "-p").mkdir(parents=True)
    (root / "-p" / "utf16.jsonl").write_bytes(b"\xff\xfe" + "needle16 in utf-16\n".encode("utf-16-le"))
    (root / "-p" / "binary.jsonl").write_bytes(b"\x00\x01 needle-bin \x00\n")
    for engine in (None, rg):
        assert search_transcripts([root], "needle16", ripgrep=engine).results == []
        assert [h.line for h in search_transcripts([root], "needle-bin", ripgrep=engine).results] == [1]
