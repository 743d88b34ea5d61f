"""One SQLite file under $MEMORYD_HOME that keeps what is costly to compute again (vectors, derivations): opened
private (0600) in WAL mode with its table made; a file that cannot be opened only costs computing again."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)


def open_cache(path: Path | None, table_sql: str, what: str) -> sqlite3.Connection | None:
    """The cache's connection (autocommit, usable from any thread under the caller's lock), or None when `path` is
    None or unusable (`what` names the cache in the warning)."""
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        os.chmod(path, 0o600)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(table_sql)
        return conn
    except sqlite3.Error as exc:
        log.warning("recall: the %s %s is unusable (%s); it is kept in memory only", what, path, exc)
        return None
