#!/usr/bin/env python3
"""Transcript search benchmark: memoryd's grep (core call) against ripgrep on the same data.

Generates ~1 GB of Claude-Code-shaped JSONL transcripts into a temp dir (deleted after), then
times a rare literal, a rare regex and a case-insensitive literal, warm cache, best of N runs.
memoryd uses one GrepPool as the daemon does (started and warmed by a first search before
timing). Target: within 3x of `rg`. Prints a table and writes bench/results/grep_bench.json.

    .venv/bin/python bench/grep_bench.py [--gb 1.0] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from memoryd.transcripts.grep import search_transcripts  # noqa: E402
from memoryd.transcripts.grep_pool import GrepPool  # noqa: E402

WORDS = ("the parser fails when the config file is missing so we add a default path and retry the request "
         "after checking the lockfile then run pytest again and update the docs for the new flag").split()
FILE_BYTES = 8 * 1024 * 1024


def _line(rng: random.Random, session: str, n: int, needle: bool) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
    if needle:
        words += " ZebraTimeoutError42 occurred"
    role = "user" if n % 2 else "assistant"
    return json.dumps({"type": role, "sessionId": session, "uuid": f"{session}-{n}", "timestamp": f"2026-03-04T10:{n % 60:02d}:00.000Z",
                       "cwd": "/home/me/app", "message": {"role": role, "content": [{"type": "text", "text": words}]}})


def generate(root: Path, total_bytes: int) -> tuple[int, int]:
    """Write files until `total_bytes`; return (bytes, needle lines)."""
    rng = random.Random(7)
    pool = [_line(rng, "pool", i, False) for i in range(5000)]
    written = needles = 0
    f = 0
    while written < total_bytes:
        folder = root / f"-home-me-project{f % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        session = f"{f:08x}-0000-4000-8000-000000000000"
        parts: list[str] = []
        size = 0
        n = 0
        while size < FILE_BYTES:
            if rng.random() < 0.00005:
                line = _line(rng, session, n, True)
                needles += 1
            else:
                line = pool[rng.randrange(len(pool))]
            parts.append(line)
            size += len(line) + 1
            n += 1
        (folder / f"{session}.jsonl").write_text("\n".join(parts) + "\n")
        written += size
        f += 1
    return written, needles


def best(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rg = shutil.which("rg")
    if rg is None:
        print("ripgrep (rg) not found: apt-get install -y ripgrep", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="memoryd-grep-bench-"))
    pool = GrepPool()
    try:
        t = time.perf_counter()
        size, needles = generate(tmp, int(args.gb * 1024**3))
        print(f"generated {size / 1024**2:,.0f} MB, {needles} needle lines in {time.perf_counter() - t:.1f}s")
        cases = [
            ("literal", "ZebraTimeoutError42", False, False, ["-F"]),
            ("regex", r"Zebra\w+Error\d+", True, False, []),
            ("ignore-case literal", "zebratimeouterror42", False, True, ["-F", "-i"]),
        ]
        rows = []
        for name, pattern, regex, icase, rg_flags in cases:
            cmd = [rg, "--no-config", "-c", *rg_flags, "-e", pattern, str(tmp)]
            subprocess.run(cmd, capture_output=True)  # warm the page cache
            rg_count = sum(int(line.rsplit(":", 1)[1]) for line in subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines())
            rg_s = best(lambda: subprocess.run(cmd, capture_output=True), args.runs)
            def search():  # type: ignore[no-untyped-def]
                return search_transcripts([tmp], pattern, regex=regex, ignore_case=icase, limit=100, deadline_seconds=600, pool=pool)

            result = search()  # also starts the pool's workers on the first case
            md_s = best(search, args.runs)
            rows.append({"case": name, "pattern": pattern, "rg_seconds": round(rg_s, 3), "memoryd_seconds": round(md_s, 3),
                         "ratio": round(md_s / rg_s, 2), "rg_matches": rg_count, "memoryd_matches": len(result.results),
                         "memoryd_truncated": result.truncated, "memoryd_mb_per_s": round(size / 1024**2 / md_s)})
        print(f"\n{'case':<22}{'rg s':>8}{'memoryd s':>11}{'ratio':>7}{'MB/s':>7}{'matches rg/md':>15}")
        for r in rows:
            print(f"{r['case']:<22}{r['rg_seconds']:>8.3f}{r['memoryd_seconds']:>11.3f}{r['ratio']:>7.2f}{r['memoryd_mb_per_s']:>7}"
                  f"{str(r['rg_matches']) + '/' + str(r['memoryd_matches']):>15}")
        out = Path(__file__).resolve().parent / "results" / "grep_bench.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"bytes": size, "needles": needles, "runs": args.runs, "workers": pool.workers, "cases": rows}, indent=2))
        print(f"\nwrote {out}")
    finally:
        pool.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
