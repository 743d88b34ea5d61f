"""Start-up benchmark: wall time of `memoryd --version`, `--help` and the commands that only
call the daemon, each run as a fresh process of the installed `memoryd` script against a real
daemon (python's own start as the floor). Prints a table and writes bench/results/startup_bench.json.

Run: .venv/bin/python bench/startup_bench.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 150.0


def _time(cmd: list[str], env: dict[str, str], cwd: Path, runs: int) -> list[float]:
    subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False)  # warm the page cache
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
        times.append((time.perf_counter() - started) * 1000)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stdout}{proc.stderr}")
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
        env = daemon_env(home, MEMORYD_LLM="off")
        daemon = DaemonProcess(home=home, env=env).start()
        try:
            subprocess.run([memoryd, "save", "-t", "project", "-n", "Deploys", "-d", "deploys go through make ship", "-b", "make ship"],
                           env=env, cwd=project, check=True, capture_output=True)
            cases = {
                "python -c pass (floor)": [sys.executable, "-c", "pass"],
                "memoryd --version": [memoryd, "--version"],
                "memoryd --help": [memoryd, "--help"],
                "memoryd status": [memoryd, "status"],
                "memoryd list": [memoryd, "list"],
                "memoryd show": [memoryd, "show", "project_deploys.md"],
                "memoryd index": [memoryd, "index"],
                "memoryd recall": [memoryd, "recall", "how do we deploy"],
                "memoryd grep": [memoryd, "grep", "deploys"],
                "memoryd dream status": [memoryd, "dream", "status"],
                "memoryd list --json": [memoryd, "list", "--json"],
            }
            rows = []
            for label, cmd in cases.items():
                times = sorted(_time(cmd, env, project, args.runs))
                p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
                rows.append({"command": label, "median_ms": round(statistics.median(times), 1), "p95_ms": round(p95, 1), "min_ms": round(times[0], 1)})
        finally:
            daemon.kill()
    width = max(len(r["command"]) for r in rows)
    print(f"{args.runs} runs each, piped output, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; target: median under {TARGET_MS:.0f} ms")
    print(f"{'command':<{width}}  median_ms  p95_ms  min_ms")
    for r in rows:
        flag = "" if r["command"].endswith("(floor)") or r["median_ms"] < TARGET_MS else "  over target"
        print(f"{r['command']:<{width}}  {r['median_ms']:>9}  {r['p95_ms']:>6}  {r['min_ms']:>6}{flag}")
    out = ROOT / "bench" / "results" / "startup_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"runs": args.runs, "target_ms": TARGET_MS, "load": os.getloadavg()[0], "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
