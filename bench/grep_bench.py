#!/usr/bin/env python3
"""Transcript search benchmark: memoryd's grep (core call) against ripgrep on the same data.

Generates ~1 GB of JSONL transcripts into a temp dir (deleted after) and times each case warm,
best of N runs; every case checks that memoryd and `rg` count the same matching lines. The
default `realistic` corpus takes its line shapes from the real transcripts in
tests/fixtures/claude-transcripts (tool_use/tool_result blocks, code, paths, mixed case, digits)
with their words and digits reshuffled by a seeded RNG; `synthetic` is the old corpus of lowercase
words from a 30-word vocabulary. memoryd runs as the daemon does: on the ripgrep it finds (the
`ripgrep` wheel's rg, else rg on PATH), and, for comparison, on its built-in scanner (what runs
when rg is absent or `[transcripts] ripgrep = "off"`). Target: memoryd on ripgrep within 1.5x of
`rg -c` in every case. Prints a table and writes bench/results/grep_bench.json.

    .venv/bin/python bench/grep_bench.py [--gb 1.0] [--runs 3] [--corpus realistic|synthetic] [--case NAME]
        [--engine both|ripgrep|python] [--rg PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from memoryd.transcripts.grep import Ripgrep, find_ripgrep, json_strings, search_transcripts  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "claude-transcripts"
FILE_BYTES = 8 * 1024 * 1024
POOL_BYTES = 48 * 1024 * 1024  # distinct perturbed lines; files are drawn from them
NEEDLE_RATE = 0.00005  # per line and needle kind: ~40 planted lines per kind in 1 GB (memoryd returns <= 100)
WORDS = (
    "the parser fails when the config file is missing so we add a default path and retry the request "
    "after checking the lockfile then run pytest again and update the docs for the new flag"
).split()
_TOKEN = re.compile(r"[A-Za-z_]{2,}|\d+")
_VALUE_START = re.compile(r'": ?"(?=[^"])')


class Case(NamedTuple):
    name: str
    pattern: str
    regex: bool
    icase: bool
    rg_flags: tuple[str, ...]
    rg_pattern: str = ""  # when rg needs other syntax for the same (ASCII, bytes) meaning


CASES = [
    Case("literal", "ZebraTimeoutError42", False, False, ("-F",)),
    Case("regex", r"Zebra\w+Error\d+", True, False, ()),
    Case("ignore-case literal", "zebratimeouterror42", False, True, ("-F", "-i")),
    Case("common-bytes literal", "cold desert road and the tailor", False, False, ("-F",)),
    Case("common-bytes -i", "cold desert road and the tailor", False, True, ("-F", "-i")),
    Case("timestamp -i", 'timestamp":"2026-03-04t10:99', False, True, ("-F", "-i")),
    Case("regex no literal", r"\b[0-9]{3}-[0-9]{4}\b", True, False, (), r"(?-u:\b)[0-9]{3}-[0-9]{4}(?-u:\b)"),
    Case("regex alternation", r"ECONNRESET|ETIMEDOUT|EHOSTUNREACH", True, False, ()),
]


def _case_variants(text: str, rng: random.Random) -> str:
    """The text as written, or (2 times in 5) upper- or title-cased, so -i finds more than exact."""
    r = rng.random()
    return text.upper() if r < 0.2 else text.title() if r < 0.4 else text


def _needle(kind: int, rng: random.Random) -> str:
    """Text planted in a line for one needle kind (see `plant`)."""
    if kind == 0:
        return _case_variants("ZebraTimeoutError42", rng) + " occurred"
    if kind == 1:
        return _case_variants("cold desert road and the tailor", rng)
    if kind == 2:
        return f"call {rng.randrange(1000):03d}-{rng.randrange(10000):04d} now"
    return rng.choice(("ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH")) + " from upstream"


def plant(line: str, rng: random.Random) -> tuple[str, bool]:
    """Maybe put one needle into a line, at the start of a random JSON string value (or for the
    timestamp kind, as a 99th minute); returns (line, planted)."""
    kind = int(rng.random() / NEEDLE_RATE)
    if kind > 4:
        return line, False
    if kind == 4:
        stamped = re.sub(
            r'"timestamp": ?"[^"]*"', f'"timestamp":"2026-03-04{rng.choice("Tt")}10:99:00.000Z"', line, count=1
        )
        return stamped, stamped != line
    starts = [m.end() for m in _VALUE_START.finditer(line)]
    if not starts:
        return line, False
    at = rng.choice(starts)
    return line[:at] + _needle(kind, rng) + " " + line[at:], True


# --- realistic corpus: the fixtures' lines with their words and digits reshuffled -------
def _fixture_lines() -> list[Any]:
    return [
        json.loads(line) for path in sorted(FIXTURES.glob("*.jsonl")) for line in path.read_text().splitlines() if line
    ]


def _prose_words(value: Any) -> list[str]:
    """The words of every string value that holds whitespace (text, code, tool output)."""
    return [
        m.group()
        for text in json_strings(value)
        if any(c.isspace() for c in text)
        for m in _TOKEN.finditer(text)
        if not m.group().isdigit()
    ]


def _perturb(value: Any, rng: random.Random, vocab: list[str], key: str = "") -> Any:
    """The same JSON shape with half the words of prose swapped for fixture words and every digit
    run redrawn (ids stay ids); timestamps stay valid ISO times."""
    if isinstance(value, dict):
        return {k: _perturb(v, rng, vocab, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_perturb(v, rng, vocab, key) for v in value]
    if not isinstance(value, str):
        return value
    if key == "timestamp":
        return (
            f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randrange(1000):03d}Z"
        )
    prose = any(c.isspace() for c in value)

    def swap(m: re.Match[str]) -> str:
        word = m.group()
        if word.isdigit():
            return "".join(rng.choice("0123456789") for _ in word)
        return rng.choice(vocab) if prose and rng.random() < 0.5 else word

    return _TOKEN.sub(swap, value)


def realistic_pool(rng: random.Random, pool_bytes: int) -> list[str]:
    """Distinct perturbed copies of the fixture lines, about `pool_bytes` in all."""
    templates = _fixture_lines()
    vocab = _prose_words(templates)
    pool: list[str] = []
    size = 0
    while size < pool_bytes:
        line = json.dumps(_perturb(rng.choice(templates), rng, vocab), ensure_ascii=False, separators=(",", ":"))
        pool.append(line)
        size += len(line) + 1
    return pool


# --- synthetic corpus: the old one ------------------------------------------------------
def synthetic_pool(rng: random.Random, lines: int = 5000) -> list[str]:
    """Lines of lowercase words from a 30-word vocabulary in a fixed envelope."""
    out = []
    for n in range(lines):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
        role = "user" if n % 2 else "assistant"
        out.append(
            json.dumps(
                {
                    "type": role,
                    "sessionId": "pool",
                    "uuid": f"pool-{n}",
                    "timestamp": f"2026-03-04T10:{n % 60:02d}:00.000Z",
                    "cwd": "/home/me/app",
                    "message": {"role": role, "content": [{"type": "text", "text": words}]},
                }
            )
        )
    return out


def generate(root: Path, total_bytes: int, corpus: str) -> tuple[int, int]:
    """Write 8 MB transcript files drawn from a line pool until `total_bytes`; (bytes, planted lines)."""
    rng = random.Random(7)
    pool = realistic_pool(rng, POOL_BYTES) if corpus == "realistic" else synthetic_pool(rng)
    written = planted = 0
    f = 0
    while written < total_bytes:
        folder = root / f"-home-me-project{f % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        parts: list[str] = []
        size = 0
        while size < FILE_BYTES:
            line, hit = plant(pool[rng.randrange(len(pool))], rng)
            planted += hit
            parts.append(line)
            size += len(line.encode()) + 1
        (folder / f"{f:08x}-0000-4000-8000-000000000000.jsonl").write_text("\n".join(parts) + "\n")
        written += size
        f += 1
    return written, planted


def best(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run_case(
    case: Case, rg: str, root: Path, size: int, runs: int, engines: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Time rg and memoryd (on each engine) on one case, runs interleaved (rg, then each engine) so
    load from other processes falls on both alike; all counts are of matching lines."""
    cmd = [rg, "--no-config", "-c", *case.rg_flags, "-e", case.rg_pattern or case.pattern, str(root)]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout  # also warms the page cache
    rg_count = sum(int(line.rsplit(":", 1)[1]) for line in out.splitlines())
    searches = {
        name: (
            lambda kwargs=kwargs: search_transcripts(
                [root],
                case.pattern,
                regex=case.regex,
                ignore_case=case.icase,
                limit=100,
                deadline_seconds=600,
                **kwargs,
            )
        )
        for name, kwargs in engines.items()
    }
    results = {name: search() for name, search in searches.items()}
    rg_s, md_s = float("inf"), dict.fromkeys(searches, float("inf"))
    for _ in range(runs):
        rg_s = min(rg_s, best(lambda: subprocess.run(cmd, capture_output=True), 1))
        for name, search in searches.items():
            md_s[name] = min(md_s[name], best(search, 1))
    row: dict[str, Any] = {
        "case": case.name,
        "pattern": case.pattern,
        "ignore_case": case.icase,
        "rg_seconds": round(rg_s, 3),
        "rg_matches": rg_count,
        "engines": {},
    }
    for name, result in results.items():
        row["engines"][name] = {
            "seconds": round(md_s[name], 3),
            "ratio": round(md_s[name] / rg_s, 2),
            "matches": len(result.results),
            "truncated": result.truncated,
            "mb_per_s": round(size / 1024**2 / md_s[name]),
            "same_matches": rg_count == len(result.results) and not result.truncated,
        }
    row["same_matches"] = all(e["same_matches"] for e in row["engines"].values())
    return row


def print_table(rows: list[dict[str, Any]]) -> None:
    names = list(rows[0]["engines"]) if rows else []
    head = "".join(f"{'memoryd/' + n + ' s':>20}{'ratio':>7}" for n in names)
    print(f"\n{'case':<22}{'rg s':>8}{head}{'  matches rg/' + '/'.join(names):>26}")
    for r in rows:
        cells = "".join(f"{r['engines'][n]['seconds']:>20.3f}{r['engines'][n]['ratio']:>7.2f}" for n in names)
        counts = "/".join(str(r["engines"][n]["matches"]) for n in names)
        same = "" if r["same_matches"] else "  MISMATCH"
        print(f"{r['case']:<22}{r['rg_seconds']:>8.3f}{cells}{str(r['rg_matches']) + '/' + counts:>26}{same}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", choices=("realistic", "synthetic"), default="realistic")
    ap.add_argument("--case", action="append", help="run only these cases (by name); default all")
    ap.add_argument(
        "--engine",
        choices=("both", "ripgrep", "python"),
        default="both",
        help="memoryd on ripgrep (as the daemon runs when rg is installed), on its built-in scanner, or both",
    )
    ap.add_argument("--rg", default=None, help="the reference rg binary (default: the one memoryd finds)")
    ap.add_argument(
        "--dir",
        default=None,
        help="generate the corpus here once and reuse it on later runs (default: a temp dir, deleted)",
    )
    args = ap.parse_args()
    rg = args.rg or find_ripgrep("auto")
    if rg is None:
        print(
            "ripgrep (rg) not found: `pip install -e .` installs the `ripgrep` wheel, or apt-get install -y ripgrep",
            file=sys.stderr,
        )
        return 2
    cases = [c for c in CASES if not args.case or c.name in args.case]
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="memoryd-grep-bench-"))
    made = tmp / "corpus.json"
    ripgrep = Ripgrep(find_ripgrep("auto") or rg)
    engines: dict[str, dict[str, Any]] = {}
    if args.engine in ("both", "ripgrep"):
        engines["ripgrep"] = {"ripgrep": ripgrep}
    if args.engine in ("both", "python"):
        engines["python"] = {}
    print(f"reference: {rg} ({Ripgrep(rg).version}); memoryd's ripgrep: {ripgrep.binary} ({ripgrep.version})")
    try:
        t = time.perf_counter()
        if made.exists():
            size, planted = json.loads(made.read_text())
        else:
            size, planted = generate(tmp, int(args.gb * 1024**3), args.corpus)
            made.write_text(json.dumps([size, planted]))
        print(
            f"{args.corpus} corpus: {size / 1024**2:,.0f} MB, {planted} planted lines, ready in {time.perf_counter() - t:.1f}s"
        )
        rows = [run_case(case, rg, tmp, size, args.runs, engines) for case in cases]
        print_table(rows)
        out = Path(__file__).resolve().parent / "results" / "grep_bench.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            json.dumps(
                {
                    "corpus": args.corpus,
                    "bytes": size,
                    "planted_lines": planted,
                    "runs": args.runs,
                    "rg": rg,
                    "rg_version": Ripgrep(rg).version,
                    "memoryd_ripgrep": ripgrep.binary,
                    "cases": rows,
                },
                indent=2,
            )
            + "\n"
        )
        print(f"\nwrote {out}")
    finally:
        if not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(r["same_matches"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
