"""Web view benchmark (#30): each server-rendered page at 2,000 memories, over loopback HTTP, with
the recall log full (500 recalls). The target is <= 100 ms per page. Prints per-page p50/p95 ms and
writes bench/results/ui_bench.json.

Run: .venv/bin/python bench/ui_bench.py [--memories 2000] [--samples 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 100.0
WORDS = "deploy staging vpn grafana pnpm lockfile orders totals cents fixtures seed docker compose redis cache migrations".split()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import httpx

    from memoryd.api.web.views import project_id
    from memoryd.base import limits
    from memoryd.config_sources import load_settings
    from memoryd.server import build_app
    from memoryd.service.daemon import Daemon
    from tests.support.servers import ThreadedServer

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        project = Path(tmp) / "project"
        (project / ".git").mkdir(parents=True)
        settings = load_settings(
            {"MEMORYD_HOME": str(home), "MEMORYD_LLM": "off", "MEMORYD_RECALL_DENSE": "off"}, home=home
        )
        settings.transcripts.roots = [str(home / "transcripts")]
        settings.memory.memory_base = ""  # benches never write into the real ~/.claude
        daemon = Daemon(settings)
        store = daemon.stores.for_cwd(str(project))
        store.path.mkdir(parents=True, exist_ok=True)
        for i in range(args.memories):  # files as an agent or a person leaves them; recover() builds MEMORY.md once
            w = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)]
            body = f"# Note {i}\n\n- {w[0]} then {w[1]}\n- see `{w[2]}.sh`\n\n```sh\nmake {w[0]}\n```\n"
            (store.path / f"project_note-{i}.md").write_text(
                f"---\nname: Note {i} on {w[0]}\ndescription: How {w[0]} and {w[1]} work ({i})\n"
                f"type: project\n---\n{body}",
                encoding="utf-8",
            )
        store.recover()
        with (
            ThreadedServer(build_app(daemon)) as server,
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {daemon.token}"}, timeout=30) as c,
        ):
            for i in range(limits.RECALL_LOG_PER_PROJECT):
                c.post(
                    "/v1/recall",
                    json={
                        "cwd": str(project),
                        "query": f"how do {WORDS[i % len(WORDS)]} and {WORDS[(i * 5) % len(WORDS)]} work",
                        "session_id": f"bench-{i}",
                    },
                )
            pid = project_id(store.path)
            recalled = daemon.recall.recall_log.entries(limit=1)[0].injected[0].filename  # type: ignore[union-attr]
            pages = {
                "projects": "/ui/",
                "memories (2,000 rows)": f"/ui/p/{pid}",
                "memory (rendered + recalls)": f"/ui/p/{pid}/m/{recalled}",
                "MEMORY.md": f"/ui/p/{pid}/index",
                "live activity": "/ui/activity",
                "live activity (project)": f"/ui/activity?p={pid}",
                "review": f"/ui/p/{pid}/review",
                "stale": f"/ui/p/{pid}/stale",
                "jobs": f"/ui/p/{pid}/jobs",
                "dream": f"/ui/p/{pid}/dream",
                "sessions": "/ui/sessions",
                "spend": "/ui/spend",
            }
            results = {}
            for name, path in pages.items():
                assert c.get(path).status_code == 200, path  # warm: templates compiled, index loaded
                times = []
                for _ in range(args.samples):
                    started = time.perf_counter()
                    r = c.get(path)
                    times.append((time.perf_counter() - started) * 1000)
                    assert r.status_code == 200
                ordered = sorted(times)
                results[name] = {
                    "p50_ms": round(statistics.median(times), 2),
                    "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
                    "bytes": len(r.content),
                }
        daemon.stop()
    print(f"{'page':32} {'p50 ms':>8} {'p95 ms':>8} {'KB':>7}")
    for name, row in results.items():
        flag = "" if row["p95_ms"] <= TARGET_MS else "  over the 100 ms target"
        print(f"{name:32} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} {row['bytes'] / 1024:7.1f}{flag}")
    out = ROOT / "bench" / "results" / "ui_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"memories": args.memories, "samples": args.samples, "target_ms": TARGET_MS, "pages": results}, indent=2
        )
        + "\n"
    )
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
