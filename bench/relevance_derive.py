#!/usr/bin/env python3
"""What deriving a memory's reach costs at 20,000 memories: the corpus's real rules (each made distinct by a
number in its name), derived once cold (every text new) and once again (the digest cache: a file touched but
unchanged, a daemon re-reading its stores). The daemon derives on each file version it has not seen.
`--restart`: the same memories as files of one store, viewed by a daemon's applies index in a first process and
again in a second one (a restarted daemon, same $MEMORYD_HOME): what a request waits (`request_view_ms`: the last
view at once, the rest derived in the background) and how long until every memory's reach is known.

    .venv/bin/python bench/relevance_derive.py [--n 20000] [--src DIR] [--restart]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def texts(n: int) -> list[tuple[str, str, str, str]]:
    """`n` memories from the corpus's rules, in turn, each with its own name."""
    rules = [
        (m["name"], m["description"], m["body"], m["type"])
        for p in sorted((HERE / "corpus" / "data").glob("*.json"))
        for m in json.loads(p.read_text(encoding="utf-8"))["memories"]
    ]
    return [(f"{r[0]} {i}", r[1], r[2], r[3]) for i, r in zip(range(n), rules * (n // len(rules) + 1))]


def restarts(src: Path, n: int) -> dict[str, object]:
    """A store of `n` memory files viewed by a first daemon process, then by a restarted one."""
    from memoryd.base.files import atomic_write
    from memoryd.store.frontmatter import render_frontmatter

    out: dict[str, object] = {"memories": n}
    with tempfile.TemporaryDirectory() as tmp:
        memdir = Path(tmp) / "memory"
        memdir.mkdir()
        for i, (name, description, body, type_) in enumerate(texts(n)):
            meta = {"name": name, "description": description, "type": type_ or "feedback"}
            atomic_write(memdir / f"m-{i}.md", render_frontmatter(meta, body))
        for label in ("first", "restarted"):
            cmd = [sys.executable, __file__, "--src", str(src), "--view", str(memdir), "--home", tmp]
            out[label] = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return out


def viewed(memdir: Path, home: Path) -> dict[str, float]:
    """One daemon's first use of a store: its index built, then what each memory applies to (derived or read)."""
    from memoryd.recall.applies_index import AppliesIndex
    from memoryd.recall.indexes import StoreIndexes
    from memoryd.store import MemoryDir

    try:
        from memoryd.recall.derived_cache import DERIVED_FILENAME, DerivedCache

        index = AppliesIndex(DerivedCache(home / DERIVED_FILENAME))
        view = lambda store, item: index.view(store, item, wait=True)  # noqa: E731
    except ImportError:  # a tree that keeps nothing on disk
        index = AppliesIndex()
        view = index.view
    store = MemoryDir(memdir)
    t0 = time.perf_counter()
    item = StoreIndexes().refresh(store, wait=True)
    t1 = time.perf_counter()
    view(store, item)
    t2 = time.perf_counter()
    AppliesIndex().view(store, item)  # a request on a store not yet derived: the last view at once (none here)
    t3 = time.perf_counter()
    return {
        "index_s": round(t1 - t0, 2),
        "applies_view_s": round(t2 - t1, 2),
        "request_view_ms": round((t3 - t2) * 1000, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--src", type=Path, default=HERE.parent, help="the tree whose derive is timed")
    ap.add_argument("--fitted", action="store_true", help="the fitted matcher's reading (relevance.memory)")
    ap.add_argument("--restart", action="store_true", help="a store's first use by a daemon, then by a restarted one")
    ap.add_argument("--view", type=Path, help=argparse.SUPPRESS)  # one process of --restart
    ap.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    if args.view:
        print(json.dumps(viewed(args.view, args.home)))
        return 0
    if args.restart:
        print(json.dumps(restarts(args.src.resolve(), args.n)))
        return 0
    if args.fitted:
        from memoryd.relevance.memory import memory as derive
    else:
        from memoryd.relevance.applies_derive import derive

    mems = texts(args.n)
    out = {}
    for label in ("cold", "again"):
        t0, cpu0 = time.perf_counter(), time.process_time()
        for m in mems:
            derive(*m)
        out[f"{label}_ms_per_memory"] = round((time.perf_counter() - t0) * 1000 / len(mems), 4)
        # the process's own CPU time: steadier than the wall clock while other work shares the cores
        out[f"{label}_cpu_ms_per_memory"] = round((time.process_time() - cpu0) * 1000 / len(mems), 4)
    out |= {"memories": len(mems), "mean_chars": round(sum(len(m[2]) for m in mems) / len(mems))}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
