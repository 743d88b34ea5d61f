#!/usr/bin/env python3
"""What deriving a memory's reach costs at 20,000 memories: the corpus's real rules (each made distinct by a
number in its name), derived once cold (every text new) and once again (the digest cache: a file touched but
unchanged, a daemon re-reading its stores). The daemon derives on each file version it has not seen.

    .venv/bin/python bench/relevance_derive.py [--n 20000] [--src DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--src", type=Path, default=HERE.parent, help="the tree whose derive is timed")
    ap.add_argument("--fitted", action="store_true", help="the fitted matcher's reading (relevance.memory)")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    if args.fitted:
        from memoryd.relevance.memory import memory as derive
    else:
        from memoryd.relevance.applies_derive import derive

    mems = texts(args.n)
    out = {}
    for label in ("cold", "again"):
        t0 = time.perf_counter()
        for m in mems:
            derive(*m)
        out[f"{label}_ms_per_memory"] = round((time.perf_counter() - t0) * 1000 / len(mems), 4)
    out |= {"memories": len(mems), "mean_chars": round(sum(len(m[2]) for m in mems) / len(mems))}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
