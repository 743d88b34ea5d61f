"""The derived cache: what each memory file applies to (derived from its text, with what its frontmatter writes) by
(DERIVE_VERSION, digest of its header and text) in one SQLite file under $MEMORYD_HOME, so a restarted daemon reads
20,000 of them back instead of parsing and deriving each file again (~30 s on two cores); rows of another version are
never read, and dropped on open, as are rows unused for CACHE_UNUSED_DAYS (an edited or deleted memory's)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.clock import SYSTEM_CLOCK, Clock
from memoryd.base.sqlite_cache import DatedCache
from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.applies_derive import shared

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
    touch derives nothing again; rows of another version, or unused for CACHE_UNUSED_DAYS, are dropped on open. None as
    the path keeps nothing."""

    def __init__(self, path: Path | None, version: str = DERIVE_VERSION, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.version = version
        self._rows = DatedCache(
            path,
            table="derived",
            columns=("version", "applies", "TEXT"),
            what="derived cache",
            only_key=version,  # rows made by another derive are never read
            clock=clock,
        )

    def get_many(self, digests: list[bytes]) -> dict[bytes, AppliesTo]:
        return self._rows.get_many(self.version, digests, decoded)

    def put_many(self, items: list[tuple[bytes, AppliesTo]]) -> None:
        self._rows.put_many(self.version, [(d, encoded(a)) for d, a in items])

    def close(self) -> None:
        self._rows.close()
