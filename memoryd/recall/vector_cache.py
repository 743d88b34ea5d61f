"""The vector cache: every embedded text's vector by (model, text digest) in one SQLite file under $MEMORYD_HOME,
so a restart, a rename or a touch re-embeds nothing; rows unused for CACHE_UNUSED_DAYS are dropped on open."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.base.clock import SYSTEM_CLOCK, Clock
from memoryd.base.sqlite_cache import DatedCache


class VectorCache:
    """Vectors by (model, text digest) in one SQLite file under $MEMORYD_HOME (float16 blobs): content-addressed, so a
    restart, a rename or a touch re-embeds nothing; rows unused for CACHE_UNUSED_DAYS are dropped on open."""

    def __init__(self, path: Path | None, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self._rows = DatedCache(
            path, table="vectors", columns=("model", "vec", "BLOB"), what="vector cache", clock=clock
        )

    def get_many(self, model: str, digests: list[bytes]) -> dict[bytes, Any]:
        return self._rows.get_many(model, digests, _decoded)

    def put_many(self, model: str, items: Iterable[tuple[bytes, Any]]) -> None:
        self._rows.put_many(model, [(d, np.asarray(v, dtype=np.float16).tobytes()) for d, v in items])

    def close(self) -> None:
        self._rows.close()


def _decoded(blob: bytes) -> Any:
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)
