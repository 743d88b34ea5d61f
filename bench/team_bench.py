#!/usr/bin/env python3
"""Team-memory sync benchmark: two members and a bare remote on local disk, through the real git CLI.

Times (best of N) a first push of --entries memories, the other member's first pull (`team init`:
each incoming file is written through `MemoryDir.restore`, which rebuilds MEMORY.md), a sync with
nothing to do, and a sync that merges --edits memories both members changed at once (half
cleanly, half kept for review). Prints a table and writes bench/results/team_bench.json.

    .venv/bin/python bench/team_bench.py [--entries 200] [--edits 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from memoryd.config import TeamSettings  # noqa: E402
from memoryd.store import StoreRegistry  # noqa: E402
from memoryd.team import TeamService  # noqa: E402


def member(root: Path, name: str, remote: Path, entries: int) -> tuple[TeamService, str]:
    project = root / name / "project"
    (project / ".git").mkdir(parents=True)
    home = root / name / "home"
    settings = TeamSettings(
        author=name, max_entries=max(entries, 1), max_push_bytes=64 * 1024 * 1024, max_pushes_per_hour=10_000
    )
    service = TeamService(settings, home=home, stores=StoreRegistry(memory_base=home))
    service.init(str(project), str(remote))
    return service, str(project)


def body(i: int, lines: int = 8) -> str:
    return "\n\n".join(f"Step {j} of procedure {i}: run the check and record the outcome." for j in range(lines))


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def run_once(entries: int, edits: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="team-bench-") as tmp:
        root = Path(tmp)
        remote = root / "remote.git"
        subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
        alice, a_cwd = member(root, "alice", remote, entries)
        for i in range(entries):
            alice.save(
                a_cwd, name=f"Procedure {i}", description=f"How we run procedure {i}", type="project", body=body(i)
            )
        out = {"first_push_s": timed(lambda: alice.repo_for(a_cwd).sync())}
        started = time.perf_counter()
        bob, b_cwd = member(root, "bob", remote, entries)  # init: git init, set the remote, first sync
        out["first_pull_s"] = time.perf_counter() - started
        out["noop_sync_s"] = timed(lambda: bob.repo_for(b_cwd).sync())
        for i in range(edits):
            lines = body(i).split("\n\n")
            mine, theirs = list(lines), list(lines)
            mine[0] += " (alice)"
            theirs[-1 if i % 2 == 0 else 0] += " (bob)"  # even: different lines (clean merge); odd: same line (review)
            alice.save(
                a_cwd,
                name=f"Procedure {i}",
                description=f"How we run procedure {i}",
                type="project",
                body="\n\n".join(mine),
            )
            bob.save(
                b_cwd,
                name=f"Procedure {i}",
                description=f"How we run procedure {i}",
                type="project",
                body="\n\n".join(theirs),
            )
        alice.repo_for(a_cwd).sync()
        report = None

        def merge() -> None:
            nonlocal report
            report = bob.repo_for(b_cwd).sync()

        out["merge_sync_s"] = timed(merge)
        assert report is not None and len(report.merged) + len(report.conflicts) == edits, report
        alice.stop()
        bob.stop()
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = [run_once(args.entries, args.edits) for _ in range(args.runs)]
    best = {key: min(r[key] for r in runs) for key in runs[0]}
    print(f"team sync, {args.entries} entries, {args.edits} concurrent edits, best of {args.runs}:")
    for key, value in best.items():
        print(f"  {key:<14} {value * 1000:8.0f} ms")
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "team_bench.json").write_text(
        json.dumps({"entries": args.entries, "edits": args.edits, "runs": args.runs, "best_seconds": best}, indent=2)
    )


if __name__ == "__main__":
    main()
