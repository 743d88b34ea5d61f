"""Store benchmark: save (write + index rebuild) p50/p95 and index rebuild time at 200 and
2,000 memories, the header scan, and the idle daemon's RSS. Prints a table and writes
bench/results/store_bench.json. Targets: save ≤ 5 ms at 200, ≤ linear growth; idle RSS ≤ 80 MB.

Run: .venv/bin/python bench/store_bench.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryd.store.memdir import MemoryDir  # noqa: E402
from tests.support.servers import DaemonProcess, daemon_env  # noqa: E402

SIZES = (200, 2000)
SAMPLES = 50
BODY = "Use the real database in integration tests.\n\n**Why:** a mocked test passed while prod broke.\n**How to apply:** start the db fixture.\n"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def bench_size(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryDir(Path(tmp) / "memory")
        for i in range(n - 1):
            store.save(name=f"memory {i}", description=f"what memory {i} is about", type=("user", "feedback", "project", "reference")[i % 4], body=BODY)
        saves = []
        for i in range(SAMPLES):  # alternate a new file and an update so the count stays ≈ n
            name = f"memory {n - 1}" if i % 2 else f"memory {i % 7}"
            t = time.perf_counter()
            store.save(name=name, description=f"sample {i}", type="project" if i % 2 else ("user", "feedback", "project", "reference")[(i % 7) % 4], body=BODY)
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


def idle_rss_mb() -> float | None:
    """Start `memoryd serve`, let it settle, read VmRSS (Linux only)."""
    if not Path("/proc/self/status").exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        proc = DaemonProcess(home=home, env=daemon_env(home))
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
    rows = [bench_size(n) for n in SIZES]
    rss = idle_rss_mb()
    cols = ["memories", "save_p50_ms", "save_p95_ms", "rebuild_p50_ms", "scan_p50_ms", "cold_scan_ms"]
    print(" | ".join(f"{c:>14}" for c in cols))
    for row in rows:
        print(" | ".join(f"{row[c]:>14}" for c in cols))
    growth = rows[1]["save_p50_ms"] / rows[0]["save_p50_ms"]
    size_ratio = SIZES[1] / SIZES[0]
    print(f"save cost growth {growth:.1f}x for {size_ratio:.0f}x memories (linear would be {size_ratio:.0f}x)")
    print(f"idle daemon RSS: {rss} MB (target ≤ 80 MB)")
    checks = {
        "save_200_le_5ms": rows[0]["save_p50_ms"] <= 5.0,
        "growth_le_linear": growth <= size_ratio,
        "idle_rss_le_80mb": rss is None or rss <= 80.0,
    }
    print("targets: " + ", ".join(f"{k} {'OK' if v else 'MISSED'}" for k, v in checks.items()))
    out = ROOT / "bench" / "results" / "store_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"sizes": rows, "idle_rss_mb": rss, "save_growth": round(growth, 2), "targets": checks}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
