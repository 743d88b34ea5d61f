"""API benchmark: p50/p95 over loopback HTTP of the hot routes, with /v1/health as the floor, so
the cost of typed request/response models is visible. Prints a table and writes
bench/results/api_bench.json.

Run: .venv/bin/python bench/api_bench.py [--src /path/to/other/checkout]  (--src: compare another tree)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 300
MEMORIES = 200


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))] * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", default=str(ROOT), help="the memoryd tree to measure")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, args.src)
    import httpx

    from memoryd.config_sources import load_settings
    from memoryd.server import build_app
    from memoryd.service.daemon import Daemon
    from tests.support.servers import ThreadedServer

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        project = Path(tmp) / "project"
        (project / ".git").mkdir(parents=True)
        settings = load_settings({"MEMORYD_HOME": str(home), "MEMORYD_LLM": "off"}, home=home)
        settings.transcripts.roots = [str(home / "transcripts")]
        settings.memory.memory_base = ""  # benches never write into the real ~/.claude
        daemon = Daemon(settings)
        with (
            ThreadedServer(build_app(daemon)) as server,
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {daemon.token}"}, timeout=10) as c,
        ):
            cwd = str(project)
            for i in range(MEMORIES):
                c.post(
                    "/v1/memories",
                    json={
                        "cwd": cwd,
                        "name": f"note {i}",
                        "description": f"deploy step {i} uses make ship",
                        "type": "project",
                        "body": "b",
                    },
                )
            calls: dict[str, Callable[[int], Any]] = {
                "GET /v1/health (floor)": lambda i: c.get("/v1/health"),
                "GET /v1/memories": lambda i: c.get("/v1/memories", params={"cwd": cwd}),
                "POST /v1/recall": lambda i: c.post(
                    "/v1/recall", json={"cwd": cwd, "query": "how do we deploy", "session_id": f"b{i}"}
                ),
                "POST /v1/memories (update)": lambda i: c.post(
                    "/v1/memories",
                    json={
                        "cwd": cwd,
                        "name": "note 1",
                        "description": "deploy step 1",
                        "type": "project",
                        "body": f"v{i}",
                    },
                ),
                "GET /v1/status": lambda i: c.get("/v1/status"),
            }
            rows = []
            for label, call in calls.items():
                call(0)
                times = []
                for i in range(SAMPLES):
                    started = time.perf_counter()
                    r = call(i)
                    times.append(time.perf_counter() - started)
                    assert r.status_code < 300, r.text
                rows.append(
                    {
                        "route": label,
                        "p50_ms": _pct(times, 0.5),
                        "p95_ms": _pct(times, 0.95),
                        "mean_ms": round(statistics.mean(times) * 1000, 3),
                    }
                )
    width = max(len(r["route"]) for r in rows)
    print(f"src: {args.src}")
    print(f"{'route':<{width}}  p50_ms  p95_ms")
    for r in rows:
        print(f"{r['route']:<{width}}  {r['p50_ms']:>6}  {r['p95_ms']:>6}")
    out = ROOT / "bench" / "results" / "api_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"src": args.src, "samples": SAMPLES, "memories": MEMORIES, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
