#!/usr/bin/env python3
"""Transcript ingestion benchmark (issue 4): JSONL parse throughput, the cost of one appended
line to a 100 MB transcript (transcript index and session notes), and turn-end answer latency over real HTTP from a separate client
process (as hooks are), in steady state and while the daemon backfills that transcript.

    .venv/bin/python bench/ingest_bench.py [--size-mb 100] [--json bench/results/ingest_bench.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from memoryd.api import create_app  # noqa: E402
from memoryd.config import load_settings  # noqa: E402
from memoryd.daemon import Daemon  # noqa: E402
from memoryd.metrics import Metrics  # noqa: E402
from memoryd.state import StateDB  # noqa: E402
from memoryd.session_memory import SessionMemory  # noqa: E402
from memoryd.transcripts import TranscriptService, parse_lines  # noqa: E402
from tests.support.servers import ThreadedServer  # noqa: E402
from tests.support.transcripts import TranscriptWriter, new_session  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def realistic_lines(n: int) -> list[bytes]:
    """A mix like the fixtures: prompts, assistant prose, tool calls, bulky tool results."""
    out: list[bytes] = []
    sid = str(uuid.uuid4())
    for i in range(n):
        env = {"parentUuid": None, "isSidechain": False, "cwd": "/home/u/app", "sessionId": sid, "version": "2.1.38",
               "uuid": str(uuid.uuid4()), "timestamp": "2026-03-04T10:00:00.000Z"}
        kind = i % 4
        if kind == 0:
            obj = {**env, "type": "user", "message": {"role": "user", "content": f"please fix the failing test number {i} in the parser module"}}
        elif kind == 1:
            obj = {**env, "type": "assistant", "message": {"id": f"msg_{i}", "role": "assistant", "model": "m", "content": [{"type": "text", "text": "Looking at it. " * 20}]}}
        elif kind == 2:
            obj = {**env, "type": "assistant", "message": {"id": f"msg_{i}", "role": "assistant", "model": "m", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "pytest -q"}}]}}
        else:
            obj = {**env, "type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x = 1\n" * 300, "is_error": False}]}, "toolUseResult": {"stdout": "..."}}
        out.append(json.dumps(obj, separators=(",", ":")).encode())
    return out


def bench_parse() -> dict[str, float]:
    lines = realistic_lines(40_000)
    size = sum(len(line) + 1 for line in lines)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        parse_lines(lines)
        best = min(best, time.perf_counter() - t)
    return {"bytes": size, "seconds": best, "mb_per_s": size / best / 1e6}


def bench_append(tmp: Path, size_mb: int) -> dict[str, float]:
    root = tmp / "projects"
    writer = new_session(root, "/home/u/app")
    writer.path.parent.mkdir(parents=True)
    block = b"\n".join(realistic_lines(4_000)) + b"\n"
    with writer.path.open("wb") as fh:
        written = 0
        while written < size_mb * 1_000_000:
            fh.write(block)
            written += len(block)
    service = TranscriptService(roots=[root], state=StateDB(tmp / "state.db"), metrics=Metrics(), watch=False)
    t = time.perf_counter()
    service.ingest(writer.path)
    first = time.perf_counter() - t
    costs = []
    for i in range(50):
        writer.user(f"one more prompt number {i}")
        t = time.perf_counter()
        result = service.ingest(writer.path)
        costs.append((time.perf_counter() - t) * 1000)
        assert result["lines"] == 1
    return {"file_mb": written / 1e6, "first_ingest_s": first, "append_p50_ms": statistics.median(costs), "append_p95_ms": pct(costs, 95),
            **bench_session_notes(tmp, writer)}


def bench_session_notes(tmp: Path, writer: TranscriptWriter) -> dict[str, float]:
    """Session-memory update of the big transcript: the first read, then one appended line at a time."""
    home = tmp / "home-notes"
    settings = load_settings({"MEMORYD_HOME": str(home)}, home=home)
    notes = SessionMemory(settings, state=StateDB(tmp / "notes.db"), llm=None, now=datetime.now)
    t = time.perf_counter()
    notes.update("bench", writer.path)
    first = time.perf_counter() - t
    costs = []
    for i in range(20):
        writer.user(f"one more prompt number {i}")
        t = time.perf_counter()
        notes.update("bench", writer.path)
        costs.append((time.perf_counter() - t) * 1000)
    notes.close()
    return {"notes_first_update_s": first, "notes_append_p50_ms": statistics.median(costs), "notes_append_p95_ms": pct(costs, 95)}


def _post_turn_ends(url: str, token: str, transcript: str, cwd: str, n: int) -> list[float]:
    """The hook side, in its own process as Claude Code's hooks are: n turn-ends, latency each (ms)."""
    times = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as client:
        for i in range(n):
            body = {"session_id": f"s{i % 30}", "transcript_path": transcript, "cwd": cwd}
            t = time.perf_counter()
            r = client.post("/v1/events/turn-end", json=body)
            times.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 202
    return times


def bench_turn_end(tmp: Path, *, backfill: bool) -> dict[str, float]:
    """Turn-end answer latency, steady state or while the daemon backfills the big transcript."""
    home = tmp / ("home-backfill" if backfill else "home-steady")
    settings = load_settings({"MEMORYD_HOME": str(home)}, home=home)
    settings.transcripts.roots = [str(tmp / "projects")] if backfill else [str(tmp / "small")]
    settings.memory.watch = False
    daemon = Daemon(settings)
    project = tmp / "proj"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    writer = new_session(Path(settings.transcripts.roots[0]), str(project))
    writer.user("hello")
    with ThreadedServer(create_app(daemon)) as server, ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pool.submit(sum, []).result()  # the client process is up before the clock starts
        started = time.perf_counter()
        times = pool.submit(_post_turn_ends, server.url, daemon.token, str(writer.path), str(project), 300).result()
        elapsed = time.perf_counter() - started
        backfilled = daemon.transcripts.file_state(next((tmp / "projects").rglob("*.jsonl"))) if backfill else None
    return {"requests": len(times), "p50_ms": statistics.median(times), "p95_ms": pct(times, 95), "max_ms": max(times),
            "seconds": elapsed, "backfill_done": bool(backfilled and backfilled["lines"] > 100_000)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "ingest_bench.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        parse = bench_parse()
        append = bench_append(tmp, args.size_mb)
        turn = bench_turn_end(tmp, backfill=False)
        busy = bench_turn_end(tmp, backfill=True)
    print("ingest benchmark")
    print(f"  parse throughput         {parse['mb_per_s']:8.1f} MB/s  ({parse['bytes'] / 1e6:.1f} MB in {parse['seconds']:.2f} s)")
    print(f"  first ingest of {append['file_mb']:.0f} MB    {append['first_ingest_s']:8.2f} s")
    print(f"  one appended line        p50 {append['append_p50_ms']:.3f} ms   p95 {append['append_p95_ms']:.3f} ms   (target < 5 ms)")
    print(f"  session notes update     first {append['notes_first_update_s']:.2f} s, then one appended line p50 {append['notes_append_p50_ms']:.2f} ms   p95 {append['notes_append_p95_ms']:.2f} ms")
    print(f"  turn-end answer (HTTP)   p50 {turn['p50_ms']:.2f} ms   p95 {turn['p95_ms']:.2f} ms   max {turn['max_ms']:.1f} ms   ({turn['requests']} requests; target ≤ 5 ms)")
    print(f"  ... during a {append['file_mb']:.0f} MB backfill  p50 {busy['p50_ms']:.2f} ms   p95 {busy['p95_ms']:.2f} ms   max {busy['max_ms']:.1f} ms")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"parse": parse, "append": append, "turn_end": turn, "turn_end_during_backfill": busy}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
