"""A probe inside a `memoryd serve` subprocess (issue 42's soak): with this folder on PYTHONPATH and
MEMPROBE_DIR set, every MEMPROBE_EVERY seconds (60) it appends RSS and its parts, glibc's heap (mallinfo2),
Python's live block count, thread count, glibc's arenas and SQLite's memory to MEMPROBE_DIR/probe.jsonl; MEMPROBE_TYPES=1 adds object counts by
type, MEMPROBE_TRACE=1 a tracemalloc snapshot each time (slow). Any other process ignores it.

    MEMPROBE_DIR=/tmp/probe MEMPROBE_EVERY=30 PYTHONPATH=bench/rss_probe_site .venv/bin/python bench/soak.py --minutes 6
"""

import os

_dir = os.environ.get("MEMPROBE_DIR")
if _dir and "serve" in __import__("sys").argv:
    import ctypes
    import gc
    import json
    import sys
    import threading
    import time
    import tracemalloc
    from collections import Counter
    from pathlib import Path

    if os.environ.get("MEMPROBE_TRACE") == "1":
        tracemalloc.start(int(os.environ.get("MEMPROBE_FRAMES", "1")))

    class _MI2(ctypes.Structure):
        _fields_ = [
            (n, ctypes.c_size_t)
            for n in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    _libc = ctypes.CDLL("libc.so.6")
    _libc.mallinfo2.restype = _MI2
    try:  # SQLite's own count of the memory it holds (page caches, statements): the library Python's sqlite3 uses
        import _sqlite3

        _sqlite = ctypes.CDLL(_sqlite3.__file__)
        _sqlite.sqlite3_memory_used.restype = ctypes.c_int64
    except (ImportError, OSError, AttributeError):
        _sqlite = None

    def _status() -> dict:
        out = {}
        for line in Path("/proc/self/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile"):
                out[k] = round(int(v.split()[0]) / 1024, 1)
        return out

    def _arenas() -> int:
        """glibc's arenas besides the main one: each a heap of its own, mapped at a 64 MB boundary."""
        starts = (int(line.split("-", 1)[0], 16) for line in Path("/proc/self/maps").read_text().splitlines())
        return sum(1 for start in starts if start % (64 << 20) == 0)

    def _loop() -> None:
        every = float(os.environ.get("MEMPROBE_EVERY", "60"))
        t0 = time.monotonic()
        i = 0
        os.makedirs(_dir, exist_ok=True)
        while True:
            time.sleep(every)
            i += 1
            m = _libc.mallinfo2()
            rec = {
                "t": round(time.monotonic() - t0),
                **_status(),
                "arena": round(m.arena / 2**20, 2),
                "mmap": round(m.hblkhd / 2**20, 2),
                "used": round(m.uordblks / 2**20, 2),
                "free": round(m.fordblks / 2**20, 2),
                "keep": round(m.keepcost / 2**20, 2),
                "pyblocks": sys.getallocatedblocks(),
                "threads": threading.active_count(),
                "arenas": _arenas(),
                "sqlite": round(_sqlite.sqlite3_memory_used() / 2**20, 2) if _sqlite else None,
            }
            if os.environ.get("MEMPROBE_TYPES") == "1":
                rec["types"] = Counter(type(o).__name__ for o in gc.get_objects()).most_common(30)
            if tracemalloc.is_tracing():
                rec["traced"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
                tracemalloc.take_snapshot().dump(os.path.join(_dir, f"snap-{i:03d}.pickle"))
            with open(os.path.join(_dir, "probe.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")

    threading.Thread(target=_loop, name="memprobe", daemon=True).start()
