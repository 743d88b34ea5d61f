#!/usr/bin/env python3
"""Stale-memory benchmark: the labelled dev set (tests/fixtures/stale: a small repo and memories
marked stale or fresh) through a real daemon's GET /v1/stale. Prints precision and recall of the
flags (targets: precision >= 0.9, recall >= 0.8), every miss, and the check's time; writes
bench/results/stale_bench.json. Exits 1 when a target is missed.

    .venv/bin/python bench/stale_bench.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryd.config import load_settings  # noqa: E402
from memoryd.server import build_app  # noqa: E402
from memoryd.service.daemon import Daemon  # noqa: E402
from tests.support.servers import ThreadedServer  # noqa: E402
from tests.support.stale_fixture import labelled_memories, make_repo  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "stale_bench.json"
PRECISION_TARGET, RECALL_TARGET = 0.9, 0.8


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        repo = make_repo(Path(tmp) / "shop")
        settings = load_settings({"MEMORYD_HOME": str(home), "MEMORYD_LLM": "off"}, home=home)
        settings.transcripts.roots = [str(home / "transcripts")]
        settings.dream.enabled = False
        daemon = Daemon(settings)
        with (
            ThreadedServer(build_app(daemon)) as server,
            httpx.Client(
                base_url=server.url, headers={"Authorization": f"Bearer {daemon.token}"}, timeout=60
            ) as client,
        ):
            labels: dict[str, bool] = {}
            for m in labelled_memories():
                r = client.post(
                    "/v1/memories",
                    json={
                        "cwd": str(repo),
                        "name": m["name"],
                        "description": m["description"],
                        "type": m["type"],
                        "body": m["body"],
                    },
                )
                r.raise_for_status()
                labels[r.json()["filename"]] = m["stale"]
            started = time.perf_counter()
            report = client.get("/v1/stale", params={"cwd": str(repo)}).json()
            cold_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            client.get("/v1/stale", params={"cwd": str(repo)}).raise_for_status()
            warm_ms = (time.perf_counter() - started) * 1000
    flagged = {m["filename"]: m["reasons"] for m in report["memories"]}
    tp = sum(1 for f in flagged if labels[f])
    fp = [f for f in flagged if not labels[f]]
    fn = [f for f, stale in labels.items() if stale and f not in flagged]
    precision = tp / len(flagged) if flagged else 0.0
    recall = tp / sum(labels.values())
    print(f"dev set: {len(labels)} memories ({sum(labels.values())} stale, {len(labels) - sum(labels.values())} fresh)")
    print(f"precision {precision:.3f} (target {PRECISION_TARGET})  recall {recall:.3f} (target {RECALL_TARGET})")
    print(f"GET /v1/stale: {cold_ms:.0f} ms cold (git ls-files, manifests, grep), {warm_ms:.0f} ms warm (cached)")
    for f in fp:
        print(f"  false positive: {f}: {'; '.join(flagged[f])}")
    for f in fn:
        print(f"  missed: {f}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "memories": len(labels),
                "stale": sum(labels.values()),
                "precision": precision,
                "recall": recall,
                "false_positives": fp,
                "missed": fn,
                "cold_ms": cold_ms,
                "warm_ms": warm_ms,
            },
            indent=2,
        )
    )
    return 0 if precision >= PRECISION_TARGET and recall >= RECALL_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
