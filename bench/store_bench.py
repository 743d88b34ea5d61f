"""Store benchmark: save p50/p95 at 200 and 2,000 memories, in-process (write + incremental index)
and over loopback HTTP against a real daemon, with the daemon's own /v1/health p50 as the floor;
full index rebuild, header scan, idle RSS. Prints a table and writes bench/results/store_bench.json.
Targets: HTTP save p50 ≤ floor + 5 ms at 200; at 2,000 ≤ 2x the 200 figure; idle RSS ≤ 80 MB.

At 20,000 files in-process: the header table's first load and its memory, the first MEMORY.md
write, save p50/p95 and a list page.

Run: .venv/bin/python bench/store_bench.py [--scale 20000]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryd.store.frontmatter import render_frontmatter  # noqa: E402
from memoryd.store.memdir import MemoryDir  # noqa: E402
from tests.support.servers import DaemonProcess, daemon_env  # noqa: E402

SIZES = (200, 2000)
SAMPLES = 50
SCALE = 20_000  # the in-process scale row (--scale N; 0 skips it)
HTTP_SAMPLES = 200
TYPES = ("user", "feedback", "project", "reference")
BODY = "Use the real database in integration tests.\n\n**Why:** a mocked test passed while prod broke.\n**How to apply:** start the db fixture.\n"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def bench_size(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = _seed(Path(tmp) / "memory", n)
        saves = []
        for i in range(SAMPLES):  # alternate a new file and an update so the count stays ≈ n
            name = f"memory {n - 1}" if i % 2 else f"memory {i % 7}"
            t = time.perf_counter()
            store.save(name=name, description=f"sample {i}", type="project" if i % 2 else TYPES[(i % 7) % 4], body=BODY)
            saves.append(time.perf_counter() - t)
        rebuilds = []
        for _ in range(SAMPLES):
            store.index_path.unlink()
            t = time.perf_counter()
            store.rebuild_index()
            rebuilds.append(time.perf_counter() - t)
        scans = []
        for _ in range(SAMPLES):
            t = time.perf_counter()
            store.scan_memory_headers()
            scans.append(time.perf_counter() - t)
        cold = MemoryDir(store.path)  # a fresh process: every header read from disk
        t = time.perf_counter()
        cold.scan_memory_headers()
        cold_scan = time.perf_counter() - t
    return {
        "memories": n,
        "save_p50_ms": _ms(statistics.median(saves)),
        "save_p95_ms": _ms(_pct(saves, 0.95)),
        "rebuild_p50_ms": _ms(statistics.median(rebuilds)),
        "scan_p50_ms": _ms(statistics.median(scans)),
        "cold_scan_ms": _ms(cold_scan),
    }


def bench_scale(n: int) -> dict[str, float]:
    """In-process at n files (no recall, no watcher): the first full load of the header table,
    the Python memory it holds (tracemalloc), saves and list reads at that size."""
    import gc
    import tracemalloc

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory"
        _seed(path, n, index=False)
        store = MemoryDir(path)
        t, cpu = time.perf_counter(), time.process_time()
        store.all_headers()
        load, load_cpu = time.perf_counter() - t, time.process_time() - cpu
        del store
        gc.collect()
        tracemalloc.start()  # a second cold load, traced (tracing slows it: not timed)
        store = MemoryDir(path)
        store.all_headers()
        gc.collect()
        table_mb = tracemalloc.get_traced_memory()[0] / 2**20
        tracemalloc.stop()
        t = time.perf_counter()
        store.rebuild_index()
        first_index = time.perf_counter() - t
        saves = []
        for i in range(SAMPLES):
            t = time.perf_counter()
            store.save(
                name=f"memory {i % 7}" if i % 2 else f"new memory {i}",
                description=f"sample {i}",
                type=TYPES[(i % 7) % 4],
                body=BODY,
            )
            saves.append(time.perf_counter() - t)
        store.set_watched(True)  # as in the daemon: the watcher names changed files
        store.all_headers()
        lists = []
        for _ in range(SAMPLES):
            t = time.perf_counter()
            store.list("project")[:1000]
            lists.append(time.perf_counter() - t)
    return {
        "memories": n,
        "table_load_ms": _ms(load),
        "table_load_cpu_ms": _ms(load_cpu),
        "table_mb": round(table_mb, 1),
        "first_index_ms": _ms(first_index),
        "save_p50_ms": _ms(statistics.median(saves)),
        "save_p95_ms": _ms(_pct(saves, 0.95)),
        "list_p50_ms": _ms(statistics.median(lists)),
    }


def _seed(path: Path, n: int, *, index: bool = True) -> MemoryDir:
    """n - 1 memories written straight to disk, one index rebuild, then everything flushed, so
    the figures do not pay for the seeding's writeback (2,000 index rewrites are 200 MB)."""
    path.mkdir(parents=True)
    for i in range(n - 1):
        type_ = TYPES[i % 4]
        meta = {"name": f"memory {i}", "description": f"what memory {i} is about", "type": type_}
        (path / f"{type_}_memory-{i}.md").write_text(render_frontmatter(meta, BODY), encoding="utf-8")
    store = MemoryDir(path)
    if index:
        store.rebuild_index()
    os.sync()
    return store


def bench_http() -> list[dict[str, float]]:
    """Saves over loopback HTTP to real `memoryd serve` daemons, one per size, their requests
    interleaved (health, save; next daemon) so every figure sees the same machine load."""
    with tempfile.TemporaryDirectory() as tmp:
        procs, cwds = [], []
        for n in SIZES:
            home, memory, cwd = Path(tmp) / f"home{n}", Path(tmp) / f"memory{n}", Path(tmp) / f"project{n}"
            cwd.mkdir()
            _seed(memory, n)
            procs.append(
                DaemonProcess(home=home, env=daemon_env(home, MEMORYD_MEMORY_DIR=str(memory), HOME=str(home.parent)))
            )
            cwds.append(cwd)
        try:
            clients = []
            for proc in procs:
                proc.start()
                clients.append(proc.client())
            for c, cwd in zip(clients, cwds):
                for _ in range(20):  # warm routing, the store table and the index
                    c.get("/v1/health")
                    c.post(
                        "/v1/memories",
                        json={"cwd": str(cwd), "name": "memory 0", "description": "warm", "type": "user", "body": BODY},
                    )
            health: list[list[float]] = [[] for _ in SIZES]
            saves: list[list[float]] = [[] for _ in SIZES]
            for i in range(HTTP_SAMPLES):
                for k, (n, c, cwd) in enumerate(zip(SIZES, clients, cwds)):
                    t = time.perf_counter()
                    c.get("/v1/health")
                    health[k].append(time.perf_counter() - t)
                    name = f"memory {n - 1}" if i % 2 else f"memory {i % 7}"
                    payload = {
                        "cwd": str(cwd),
                        "name": name,
                        "description": f"sample {i}",
                        "type": "project" if i % 2 else TYPES[(i % 7) % 4],
                        "body": BODY,
                    }
                    t = time.perf_counter()
                    r = c.post("/v1/memories", json=payload)
                    saves[k].append(time.perf_counter() - t)
                    assert r.status_code in (200, 201), r.text
            for c in clients:
                c.close()
        finally:
            for proc in procs:
                proc.kill()
    return [
        {
            "memories": n,
            "health_p50_ms": _ms(statistics.median(health[k])),
            "http_save_p50_ms": _ms(statistics.median(saves[k])),
            "http_save_p95_ms": _ms(_pct(saves[k], 0.95)),
        }
        for k, n in enumerate(SIZES)
    ]


def fsync_ms(where: Path | None = None, n: int = 50) -> dict[str, float]:
    """This disk's fsync cost (`where`: a folder on the disk to measure; default bench/): a durable save pays
    2 file fsyncs (memory, index; issued together, they share one journal commit) and then 1 dir fsync."""
    files, dirs = [], []
    with tempfile.TemporaryDirectory(dir=where or ROOT / "bench") as tmp:
        for i in range(n):
            t = time.perf_counter()
            fd = os.open(f"{tmp}/f{i}", os.O_WRONLY | os.O_CREAT)
            os.write(fd, BODY.encode())
            os.fsync(fd)
            os.close(fd)
            files.append(time.perf_counter() - t)
            t = time.perf_counter()
            fd = os.open(tmp, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
            dirs.append(time.perf_counter() - t)
    return {"file_fsync_p50_ms": _ms(statistics.median(files)), "dir_fsync_p50_ms": _ms(statistics.median(dirs))}


def idle_rss_mb() -> float | None:
    """Start `memoryd serve`, let it settle, read VmRSS (Linux only)."""
    if not Path("/proc/self/status").exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        proc = DaemonProcess(home=home, env=daemon_env(home, HOME=str(home.parent)))  # never the real ~/.claude
        try:
            proc.start()
            with proc.client() as c:  # one request so routing and the store are warm
                c.get("/v1/status")
            time.sleep(2.0)
            assert proc.proc is not None
            for line in Path(f"/proc/{proc.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
        finally:
            proc.kill()
    return None


def main() -> int:
    scale_n = int(sys.argv[sys.argv.index("--scale") + 1]) if "--scale" in sys.argv else SCALE
    rows = [bench_size(n) for n in SIZES]
    scale = bench_scale(scale_n) if scale_n else None
    http = bench_http()
    rss = idle_rss_mb()
    disk = fsync_ms()
    cols = ["memories", "save_p50_ms", "save_p95_ms", "rebuild_p50_ms", "scan_p50_ms", "cold_scan_ms"]
    print("in-process:")
    print(" | ".join(f"{c:>14}" for c in cols))
    for row in rows:
        print(" | ".join(f"{row[c]:>14}" for c in cols))
    hcols = ["memories", "health_p50_ms", "http_save_p50_ms", "http_save_p95_ms"]
    print("over loopback HTTP (floor: the daemon's own /v1/health):")
    print(" | ".join(f"{c:>16}" for c in hcols))
    for row in http:
        print(" | ".join(f"{row[c]:>16}" for c in hcols))
    small, big = http
    growth = big["http_save_p50_ms"] / small["http_save_p50_ms"]
    over_floor = small["http_save_p50_ms"] - small["health_p50_ms"]
    print(f"HTTP save at {SIZES[0]}: floor + {over_floor:.2f} ms; at {SIZES[1]}: {growth:.2f}x the {SIZES[0]} figure")
    durable = disk["file_fsync_p50_ms"] + disk["dir_fsync_p50_ms"]
    print(
        f"this disk: file fsync p50 {disk['file_fsync_p50_ms']} ms, dir fsync p50 {disk['dir_fsync_p50_ms']} ms; "
        f"a durable save pays 2 concurrent file fsyncs then 1 dir fsync (≥ {durable:.2f} ms), so floor + fsyncs ≥ {small['health_p50_ms'] + durable:.2f} ms"
    )
    if scale:
        print(
            f"at {scale['memories']:,} files in-process: "
            + ", ".join(f"{k} {v}" for k, v in scale.items() if k != "memories")
        )
    print(f"idle daemon RSS: {rss} MB (target ≤ 80 MB)")
    checks = {
        "http_save_200_le_floor_plus_5ms": over_floor <= 5.0,
        "http_save_2000_le_2x_200": growth <= 2.0,
        "idle_rss_le_80mb": rss is None or rss <= 80.0,
    }
    print("targets: " + ", ".join(f"{k} {'OK' if v else 'MISSED'}" for k, v in checks.items()))
    out = ROOT / "bench" / "results" / "store_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "in_process": rows,
                "http": http,
                "disk": disk,
                "idle_rss_mb": rss,
                "scale": scale,
                "http_save_growth": round(growth, 2),
                "targets": checks,
            },
            indent=2,
        )
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
