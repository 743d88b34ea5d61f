"""The derived cache: what each memory file applies to (derived from its text, with what its frontmatter writes) by
(DERIVE_VERSION, digest of its header and text) in one SQLite file under $MEMORYD_HOME, so a restarted daemon reads
20,000 of them back instead of parsing and deriving each file again (~30 s on two cores); rows of another version are
never read, and dropped on open."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from dataclasses import fields
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.sqlite_cache import open_cache
from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.applies_derive import shared

log = logging.getLogger(__name__)
DERIVED_FILENAME = "recall-derived.sqlite"
# What a kept row depends on besides the file: the code that reads a file's frontmatter, derives and combines, and the
# word lists it reads (relevance/data/*.toml). Any edit of one of them, or of how much of a body is read, is a new
# version, so a daemon never serves what older code or data derived.
_DERIVED_BY = (
    "relevance/applies_derive.py",
    "relevance/applies.py",
    "relevance/features.py",
    "relevance/lexicon.py",
    "relevance/shell.py",
    "base/text.py",
    "store/frontmatter.py",
    "recall/applies_index.py",
)


def _version() -> str:
    package = Path(__file__).resolve().parent.parent
    version = hashlib.blake2b(str(limits.APPLIES_DERIVE_MAX_CHARS).encode(), digest_size=12)
    for path in [package / p for p in _DERIVED_BY] + sorted((package / "relevance" / "data").glob("*.toml")):
        version.update(path.name.encode() + b"\0" + path.read_bytes())
    return version.hexdigest()


DERIVE_VERSION = _version()
_CHUNK = 500  # digests per SELECT (under SQLite's bound on parameters)
_DEFAULTS = AppliesTo()


def encoded(applies: AppliesTo) -> str:
    """A derivation as JSON: each field that differs from its default, sets sorted."""
    out: dict[str, Any] = {}
    for f in fields(AppliesTo):
        value = getattr(applies, f.name)
        if value != getattr(_DEFAULTS, f.name):
            out[f.name] = sorted(value) if isinstance(value, frozenset) else value
    return json.dumps(out, separators=(",", ":"))


def decoded(text: str) -> AppliesTo:
    """`encoded` read back: equal to what was derived, its sets shared as `derive` shares them."""
    values: dict[str, Any] = {}
    for name, value in json.loads(text).items():
        default = getattr(_DEFAULTS, name)
        if isinstance(default, frozenset):
            values[name] = shared(frozenset(value))
        elif isinstance(default, tuple):
            values[name] = shared(tuple(tuple(v) if isinstance(v, list) else v for v in value))
        else:
            values[name] = value
    return shared(AppliesTo(**values))


class DerivedCache:
    """Derivations by (DERIVE_VERSION, text digest) in one SQLite file: content-addressed, so a restart, a rename or a
    touch derives nothing again; None as the path keeps nothing."""

    def __init__(self, path: Path | None, version: str = DERIVE_VERSION) -> None:
        self.version = version
        self._lock = threading.Lock()
        self._conn = open_cache(
            path,
            "CREATE TABLE IF NOT EXISTS derived (version TEXT NOT NULL, digest BLOB NOT NULL, applies TEXT NOT NULL, "
            "PRIMARY KEY (version, digest))",
            "derived cache",
        )
        if self._conn is not None:
            try:
                self._conn.execute("DELETE FROM derived WHERE version != ?", (version,))  # made by another derive
            except sqlite3.Error as exc:  # a broken cache only costs deriving again
                log.warning("recall: the derived cache %s is unusable (%s); it is kept in memory only", path, exc)
                self._conn = None

    def get_many(self, digests: list[bytes]) -> dict[bytes, AppliesTo]:
        if self._conn is None or not digests:
            return {}
        out: dict[bytes, AppliesTo] = {}
        with self._lock:
            for i in range(0, len(digests), _CHUNK):
                chunk = digests[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT digest, applies FROM derived WHERE version = ? AND digest IN ({marks})",
                    [self.version, *chunk],
                ).fetchall()
                out.update((bytes(d), decoded(a)) for d, a in rows)
        return out

    def put_many(self, items: list[tuple[bytes, AppliesTo]]) -> None:
        if self._conn is None or not items:
            return
        rows = [(self.version, d, encoded(a)) for d, a in items]
        with self._lock:
            try:
                self._conn.execute("BEGIN")
                self._conn.executemany("INSERT OR REPLACE INTO derived VALUES (?, ?, ?)", rows)
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                log.warning("recall: could not keep %d derivations (%s)", len(rows), exc)
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
