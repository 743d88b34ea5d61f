#!/usr/bin/env python3
"""One digest of everything `derive` gives for 5,000 corpus rules (bench/relevance_derive.py's texts) plus every
corpus and coding-set memory under each memory type: a change meant only to make deriving faster must leave it
unchanged. Sets are printed sorted, so the digest does not depend on hash order; run it on both trees.

    PYTHONHASHSEED=0 .venv/bin/python bench/derive_digest.py [--src DIR] [--n 5000]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TYPES = ("feedback", "user", "project", "reference", "")


def canonical(value: Any) -> str:
    """A value's repr with every set sorted (a frozenset's own repr follows hash order)."""
    if isinstance(value, frozenset | set):
        return "{" + ", ".join(sorted(canonical(v) for v in value)) + "}"
    if isinstance(value, tuple | list):
        return "(" + ", ".join(canonical(v) for v in value) + ")"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f"{f.name}={canonical(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}(" + ", ".join(fields) + ")"
    return repr(value)


def memories() -> list[tuple[str, str, str, str]]:
    """Every memory of the corpus and the coding set, each under every type."""
    files = sorted((HERE / "corpus" / "data").glob("*.json")) + sorted((HERE / "coding" / "data").glob("*.json"))
    rows = [(m["name"], m["description"], m["body"]) for p in files for m in json.loads(p.read_text())["memories"]]
    return [(*r, t) for r in rows for t in TYPES]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5_000)
    ap.add_argument("--src", type=Path, default=HERE.parent, help="the tree whose derive is hashed")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    sys.path.insert(0, str(HERE))
    from relevance_derive import texts

    from memoryd.relevance.applies_derive import derive

    digest = hashlib.sha256()
    mems = texts(args.n) + memories()
    for m in mems:
        digest.update(canonical(derive(*m)).encode())
        digest.update(b"\0")
    print(json.dumps({"memories": len(mems), "sha256": digest.hexdigest()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
