#!/usr/bin/env python3
"""Transcript pipeline benchmark: throughput and memory of the one pipeline (both consumers
subscribed) on a big transcript, the cost of one appended line, turn-end latency over HTTP,
and a real daemon ingesting a transcript with a 200 MB line while /v1/health is polled.

    .venv/bin/python bench/ingest_bench.py [--size-mb 500] [--daemon-mb 1000] [--json bench/results/ingest_bench.json]

(0 MB skips that part.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from tests.support.servers import DaemonProcess, daemon_env  # noqa: E402
from tests.support.transcripts import new_session  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def realistic_lines(n: int, sid: str) -> list[bytes]:
    """A mix like the real fixtures: prompts, assistant prose, tool calls, bulky tool results."""
    out: list[bytes] = []
    for i in range(n):
        env = {
            "parentUuid": None,
            "isSidechain": False,
            "cwd": "/home/u/app",
            "sessionId": sid,
            "version": "2.1.38",
            "uuid": str(uuid.uuid4()),
            "timestamp": "2026-03-04T10:00:00.000Z",
        }
        kind = i % 4
        if kind == 0:
            obj = {
                **env,
                "type": "user",
                "message": {"role": "user", "content": f"please fix the failing test number {i} in the parser module"},
            }
        elif kind == 1:
            obj = {
                **env,
                "type": "assistant",
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "m",
                    "content": [{"type": "text", "text": "Looking at it. " * 20}],
                },
            }
        elif kind == 2:
            obj = {
                **env,
                "type": "assistant",
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "m",
                    "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "pytest -q"}}],
                },
            }
        else:
            obj = {
                **env,
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x = 1\n" * 300, "is_error": False}
                    ],
                },
                "toolUseResult": {"stdout": "..."},
            }
        out.append(json.dumps(obj, separators=(",", ":")).encode())
    return out


def write_transcript(path: Path, size_mb: int, sid: str, *, giant_line_mb: int = 0) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with path.open("wb") as fh:
        if giant_line_mb:
            head = b'{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"'
            fh.write(head)
            chunk = b"y" * (1 << 20)
            for _ in range(giant_line_mb):
                fh.write(chunk)
            fh.write(b'"}]}}\n')
            written += giant_line_mb << 20
        while written < size_mb * 1_000_000:
            block = b"\n".join(realistic_lines(4_000, sid)) + b"\n"
            fh.write(block)
            written += len(block)
    return written


_CHILD = r"""
import json, resource, sys, time
from datetime import datetime
from pathlib import Path
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.config import load_settings
from memoryd.extract.pending import PendingTurns
from memoryd.session_memory import SessionMemory
from memoryd.transcripts.pipeline import TranscriptPipeline
path, home = Path(sys.argv[1]), Path(sys.argv[2])
settings = load_settings({"MEMORYD_HOME": str(home)}, home=home)
settings.memory.memory_base = ""
state = StateDB(home / "state.db")
pipeline = TranscriptPipeline(state=state, metrics=Metrics())
notes = SessionMemory(settings.session_memory, home=settings.home, state=state, llm=None, now=datetime.now, advance=pipeline.advance)
pipeline.subscribe(PendingTurns(state))
pipeline.subscribe(notes)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t, cpu = time.perf_counter(), time.process_time()
result = pipeline.advance(path)
seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
costs = []
for i in range(50):
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "user", "uuid": f"extra-{i}", "sessionId": "bench", "message": {"role": "user", "content": f"one more prompt {i}"}}) + "\n")
    t0 = time.perf_counter()
    pipeline.advance(path)
    costs.append((time.perf_counter() - t0) * 1000)
costs.sort()
from memoryd.transcripts.parser import parse_lines
from memoryd.transcripts.reader import iter_batches
t, parse_cpu = time.perf_counter(), time.process_time()
for batch in iter_batches(path):  # the parse alone: the reader and parser, no consumer, no SQLite
    parse_lines(batch.lines)
parse_seconds, parse_cpu = time.perf_counter() - t, time.process_time() - parse_cpu
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "parse_seconds": parse_seconds, "parse_cpu_seconds": parse_cpu,
                  "bytes": result.bytes_read, "lines": result.lines, "rss_before_mb": before / 1024,
                  "rss_peak_mb": peak / 1024, "append_p50_ms": costs[len(costs) // 2], "append_p95_ms": costs[int(len(costs) * 0.95)]}))
"""


def bench_pipeline(tmp: Path, size_mb: int) -> dict[str, float]:
    """The pipeline in a fresh process (so its peak RSS is its own): first read of a big transcript, then appends."""
    path = tmp / "projects" / "-home-u-app" / "bench.jsonl"
    write_transcript(path, size_mb, "bench")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(tmp / "pipeline-home")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["mb_per_s"] = r["bytes"] / r["seconds"] / 1e6
    r["mb_per_cpu_s"] = r["bytes"] / r["cpu_seconds"] / 1e6  # what the pipeline costs whatever else runs on the machine
    r["parse_mb_per_s"] = r["bytes"] / r["parse_seconds"] / 1e6
    r["parse_mb_per_cpu_s"] = r["bytes"] / r["parse_cpu_seconds"] / 1e6
    r["rss_growth_mb"] = r["rss_peak_mb"] - r["rss_before_mb"]
    return r


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bench_daemon(tmp: Path, size_mb: int, giant_mb: int) -> dict[str, float]:
    """A real daemon ingests a transcript that opens with a `giant_mb` line; /v1/health is polled meanwhile."""
    home = tmp / "daemon-home"
    roots = home / "transcripts"
    (home).mkdir(parents=True)
    (home / "config.toml").write_text(f'[transcripts]\nroots = ["{roots}"]\n')
    (tmp / "user").mkdir()
    proc = DaemonProcess(home=home, env=daemon_env(home, HOME=str(tmp / "user"))).start()  # never the real ~/.claude
    assert proc.proc is not None
    try:
        idle = rss_mb(proc.proc.pid)
        writer = new_session(roots, "/home/u/app")
        stop = threading.Event()
        health: list[float] = []
        when: list[float] = []  # seconds since the writer started, per health sample
        started = time.perf_counter()
        peak = [idle]

        def poll() -> None:
            with httpx.Client(base_url=proc.url, timeout=10) as client:
                while not stop.is_set():
                    t = time.perf_counter()
                    client.get("/v1/health")
                    health.append((time.perf_counter() - t) * 1000)
                    when.append(t - started)
                    peak[0] = max(peak[0], rss_mb(proc.proc.pid))
                    time.sleep(0.02)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        written = write_transcript(writer.path, size_mb, writer.session_id, giant_line_mb=giant_mb)
        with proc.client() as c:
            while True:
                status = c.get("/v1/status").json()["transcripts"]
                if status["bytes_read"] >= written - 1:
                    break
                time.sleep(0.2)
        seconds = time.perf_counter() - started
        stop.set()
        poller.join()
        return {
            "file_mb": written / 1e6,
            "giant_line_mb": giant_mb,
            "seconds": seconds,
            "idle_rss_mb": idle,
            "peak_rss_mb": peak[0],
            "health_p50_ms": statistics.median(health),
            "health_p99_ms": pct(health, 99),
            "health_max_ms": max(health),
            "health_max_at_s": when[health.index(max(health))],
            "health_requests": len(health),
            "oversized_lines": status["oversized_lines"],
        }
    finally:
        proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--daemon-mb", type=int, default=1000)
    parser.add_argument("--giant-line-mb", type=int, default=200)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "ingest_bench.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        pipe = bench_pipeline(tmp, args.size_mb) if args.size_mb else {}
        daemon = bench_daemon(tmp, args.daemon_mb, args.giant_line_mb) if args.daemon_mb else {}
    print("transcript pipeline benchmark")
    if pipe:
        print_pipeline(pipe)
    if daemon:
        print_daemon(daemon)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"pipeline": pipe, "daemon": daemon}, indent=2))
    print(f"wrote {out}")
    return 0


def print_pipeline(pipe: dict[str, float]) -> None:
    print(
        f"  first read of {pipe['bytes'] / 1e6:.0f} MB     {pipe['mb_per_s']:8.1f} MB/s  ({pipe['seconds']:.2f} s, {pipe['lines']:,} lines, "
        f"both consumers; target ≥ 100 MB/s); {pipe['mb_per_cpu_s']:.1f} MB per CPU-second"
    )
    print(
        f"  JSONL parse alone         {pipe['parse_mb_per_s']:8.1f} MB/s  ({pipe['parse_mb_per_cpu_s']:.1f} MB per CPU-second)"
    )
    print(
        f"  RSS growth while reading  {pipe['rss_growth_mb']:8.1f} MB     (peak {pipe['rss_peak_mb']:.0f} MB; target ≤ 50 MB)"
    )
    print(f"  one appended line        p50 {pipe['append_p50_ms']:.2f} ms   p95 {pipe['append_p95_ms']:.2f} ms")


def print_daemon(daemon: dict[str, float]) -> None:
    print(
        f"  daemon, {daemon['file_mb']:.0f} MB with a {daemon['giant_line_mb']} MB line: {daemon['seconds']:.1f} s, peak RSS {daemon['peak_rss_mb']:.0f} MB "
        f"(idle {daemon['idle_rss_mb']:.0f}; target ≤ 150), /v1/health p50 {daemon['health_p50_ms']:.1f} ms p99 {daemon['health_p99_ms']:.1f} ms "
        f"max {daemon['health_max_ms']:.1f} ms at {daemon['health_max_at_s']:.1f} s (target < 100), {daemon['oversized_lines']} oversized line skipped"
    )


if __name__ == "__main__":
    raise SystemExit(main())
