#!/usr/bin/env python3
"""Paired A/B of how a recall's prompt is embedded (issue 42 item 3), in one process so that a loaded
machine's drift falls on every variant alike: each LoCoMo dev question is recalled once per variant,
back to back in a random order, its query vector forgotten before each (the engine runs every time).
Variants: the prompt's embedding on 1 or 2 OpenMP threads. Prints p50 / p95 per variant and the
median of the per-question differences against the old way (2 threads); writes
bench/results/query_paired.json.

    .venv/bin/python bench/query_paired.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recall_bench import DEFAULT_DATA  # noqa: E402

from memoryd.base.files import atomic_write  # noqa: E402
from memoryd.recall import dense  # noqa: E402
from memoryd.service.daemon import Daemon  # noqa: E402
from memoryd.store.frontmatter import render_frontmatter  # noqa: E402
from tests.conftest import make_settings  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "query_paired.json"
VARIANTS = {"2 threads": 2, "1 thread": 1}


def pct(xs: list[float], p: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--json", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="memoryd-paired-"))
    (tmp / "home").mkdir()
    daemon = Daemon(make_settings(tmp / "home", MEMORYD_RECALL_DENSE="auto", MEMORYD_LLM="off"))
    asked: list[tuple[Path, str]] = []
    for conv in (json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()):
        project = tmp / f"project-{conv['conv_id']}"
        (project / ".git").mkdir(parents=True)
        memdir = daemon.stores.for_cwd(str(project)).path
        memdir.mkdir(parents=True, exist_ok=True)
        for i, m in enumerate(conv["memories"]):
            meta = {k: m[k] for k in ("name", "description", "type")} | {"created": "2025-01-01T00:00:00Z"}
            atomic_write(memdir / f"{m['type']}_m{i}.md", render_frontmatter(meta, m["body"]))
        asked += [(project, q["q"]) for q in conv["queries"]]
    daemon.recall.warm()
    while daemon.recall.indexes.dense_pending():
        time.sleep(0.1)
    queries = daemon.recall.indexes.encoder.backend.query  # type: ignore[union-attr]
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    rng = random.Random(5)
    for _ in range(args.rounds):
        for project, question in asked:
            order = list(VARIANTS)
            rng.shuffle(order)
            for variant in order:
                dense.QUERY_THREADS = VARIANTS[variant]  # read by the engine's query at each call
                queries._known.clear()  # type: ignore[attr-defined]
                t = time.perf_counter()
                daemon.recall.recall(str(project), question, uuid.uuid4().hex)
                times[variant].append((time.perf_counter() - t) * 1000)
    daemon.recall.close()
    daemon.state.close()
    old = times["2 threads"]
    out: dict[str, Any] = {}
    for variant, ts in times.items():
        out[variant] = {
            "p50_ms": round(statistics.median(ts), 2),
            "p95_ms": round(pct(ts, 0.95), 2),
            "paired_median_vs_2_threads_ms": round(statistics.median(a - b for a, b in zip(ts, old, strict=True)), 2),
        }
        print(
            f"{variant:18} p50 {out[variant]['p50_ms']:6.2f}  p95 {out[variant]['p95_ms']:6.2f}  "
            f"per question vs 2 threads {out[variant]['paired_median_vs_2_threads_ms']:+.2f} ms"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"recalls_per_variant": len(old), "variants": out}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
