"""Start-up benchmark: wall time of `memoryd --version`, `--help` and the commands that only
call the daemon, each run as a fresh process of the installed `memoryd` script against a real
daemon (python's own start as the floor). The daemon's own time for the same request (measured
in-process over a kept-alive connection) is subtracted to give the command's start-up. Prints a
table and writes bench/results/startup_bench.json.

Run: .venv/bin/python bench/startup_bench.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 150.0


def _time(cmd: list[str], env: dict[str, str], cwd: Path, runs: int) -> tuple[list[float], list[float]]:
    """Wall times and CPU times (user + system, which other processes on a busy machine disturb less), ms."""
    subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False)  # warm the page cache
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
        walls.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stdout}{proc.stderr}")
    return walls, cpus


def _call_times(call: Callable[[int], Any], runs: int) -> list[float]:
    call(-1)
    times = []
    for i in range(runs):
        started = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="runs per command (default 20)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.support.servers import DaemonProcess, daemon_env

    memoryd = str(Path(sys.executable).parent / "memoryd")
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        (project / ".git").mkdir(parents=True)
        env = daemon_env(home, MEMORYD_LLM="off", HOME=str(Path(tmp)))  # never the real ~/.claude
        daemon = DaemonProcess(home=home, env=env).start()
        try:
            subprocess.run(
                [
                    memoryd,
                    "save",
                    "-t",
                    "project",
                    "-n",
                    "Deploys",
                    "-d",
                    "deploys go through make ship",
                    "-b",
                    "make ship",
                ],
                env=env,
                cwd=project,
                check=True,
                capture_output=True,
            )
            from memoryd.client import MemorydClient

            api = MemorydClient.from_env(env)
            cwd = {"cwd": str(project)}
            cases: dict[str, tuple[list[str], Callable[[int], Any] | None]] = {
                "python -c pass (floor)": ([sys.executable, "-c", "pass"], None),
                "memoryd --version": ([memoryd, "--version"], None),
                "memoryd --help": ([memoryd, "--help"], None),
                "memoryd status": ([memoryd, "status"], lambda i: api.status()),
                "memoryd list": ([memoryd, "list"], lambda i: api.list_memories(project)),
                "memoryd list --json": ([memoryd, "list", "--json"], lambda i: api.list_memories(project)),
                "memoryd show": (
                    [memoryd, "show", "project_deploys.md"],
                    lambda i: api.get_memory(project, "project_deploys.md"),
                ),
                "memoryd index": ([memoryd, "index"], lambda i: api.index(project)),
                "memoryd recall": (
                    [memoryd, "recall", "how do we deploy"],
                    lambda i: api.recall(project, "how do we deploy", f"bench-{i}"),
                ),
                "memoryd grep": ([memoryd, "grep", "deploys"], lambda i: api.grep("deploys", cwd=project)),
                "memoryd dream status": (
                    [memoryd, "dream", "status"],
                    lambda i: api.request("GET", "/v1/dream/status", params=cwd),
                ),
            }
            rows: list[dict[str, Any]] = []
            for label, (cmd, call) in cases.items():
                walls, cpus = _time(cmd, env, project, args.runs)
                times = sorted(walls)
                p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
                daemon_ms = statistics.median(_call_times(call, args.runs)) if call else 0.0
                rows.append(
                    {
                        "command": label,
                        "median_ms": round(statistics.median(times), 1),
                        "p95_ms": round(p95, 1),
                        "min_ms": round(times[0], 1),
                        "daemon_ms": round(daemon_ms, 1),
                        "startup_ms": round(statistics.median(times) - daemon_ms, 1),
                        "cpu_ms": round(statistics.median(cpus), 1),
                    }
                )
            api.close()
        finally:
            daemon.kill()
    width = max(len(r["command"]) for r in rows)
    print(
        f"{args.runs} runs each, piped output, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; target: start-up (median minus the daemon's time) under {TARGET_MS:.0f} ms"
    )
    print(f"{'command':<{width}}  median_ms  p95_ms  min_ms  daemon_ms  startup_ms  cpu_ms")
    for r in rows:
        flag = "" if r["command"].endswith("(floor)") or r["startup_ms"] < TARGET_MS else "  over target"
        print(
            f"{r['command']:<{width}}  {r['median_ms']:>9}  {r['p95_ms']:>6}  {r['min_ms']:>6}  {r['daemon_ms']:>9}  {r['startup_ms']:>10}  {r['cpu_ms']:>6}{flag}"
        )
    out = ROOT / "bench" / "results" / "startup_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"runs": args.runs, "target_ms": TARGET_MS, "load": os.getloadavg()[0], "rows": rows}, indent=2)
    )


if __name__ == "__main__":
    main()
