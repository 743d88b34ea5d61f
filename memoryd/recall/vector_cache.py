"""The vector cache: every embedded text's vector by (model, text digest) in one SQLite file under $MEMORYD_HOME,
so a restart, a rename or a touch re-embeds nothing."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.base.sqlite_cache import open_cache

log = logging.getLogger(__name__)


class VectorCache:
    """Vectors by (model, text digest) in one SQLite file under $MEMORYD_HOME (float16 blobs):
    content-addressed, so a restart, a rename or a touch re-embeds nothing."""

    def __init__(self, path: Path | None) -> None:
        self._lock = threading.Lock()
        self._conn = open_cache(
            path,
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, digest BLOB NOT NULL, vec BLOB NOT NULL, "
            "PRIMARY KEY (model, digest))",
            "vector cache",
        )

    def get_many(self, model: str, digests: list[bytes]) -> dict[bytes, Any]:
        if self._conn is None or not digests:
            return {}
        out: dict[bytes, Any] = {}
        with self._lock:
            for i in range(0, len(digests), 500):
                chunk = digests[i : i + 500]
                rows = self._conn.execute(
                    f"SELECT digest, vec FROM vectors WHERE model = ? AND digest IN ({','.join('?' * len(chunk))})",
                    [model, *chunk],
                )
                out.update((bytes(d), np.frombuffer(v, dtype=np.float16).astype(np.float32)) for d, v in rows)
        return out

    def put_many(self, model: str, items: Iterable[tuple[bytes, Any]]) -> None:
        if self._conn is None:
            return
        rows = [(model, d, np.asarray(v, dtype=np.float16).tobytes()) for d, v in items]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
