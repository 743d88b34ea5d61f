"""The vector cache keeps what was embedded across restarts, and forgets what nobody used: rows unused for
CACHE_UNUSED_DAYS are dropped on open (real SQLite files, the day moved by a ManualClock), a file from before rows were
dated is read and then ages, and a file it cannot use only costs embedding again."""

from __future__ import annotations

import logging
import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from memoryd.base import limits
from memoryd.base.clock import ManualClock
from memoryd.recall.dense import VECTORS_FILENAME
from memoryd.recall.vector_cache import VectorCache

# The exact table a cache file held before rows were dated (what every existing $MEMORYD_HOME has).
UNDATED_TABLE = (
    "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, digest BLOB NOT NULL, vec BLOB NOT NULL, "
    "PRIMARY KEY (model, digest))"
)
A, B, C = b"a" * 16, b"b" * 16, b"c" * 16
VEC = np.array([0.5, -0.25, 1.0, 0.125], dtype=np.float32)  # exact in float16


def kept_digests(db: Path) -> set[tuple[str, bytes]]:
    with sqlite3.connect(db) as conn:
        found = {(m, bytes(d)) for m, d in conn.execute("SELECT model, digest FROM vectors")}
    conn.close()
    return found


def test_vectors_unused_for_a_month_are_dropped_on_open(tmp_path: Path) -> None:
    db, clock = tmp_path / VECTORS_FILENAME, ManualClock()
    cache = VectorCache(db, clock=clock)
    cache.put_many("model-1", [(A, VEC), (B, VEC)])
    cache.put_many("model-2", [(A, VEC)])  # another model's rows are kept too, while used
    cache.close()
    clock.advance(timedelta(days=limits.CACHE_UNUSED_DAYS - 1))
    cache = VectorCache(db, clock=clock)
    assert set(cache.get_many("model-1", [A])) == {A}
    cache.close()
    clock.advance(timedelta(days=2))  # B and model-2's A: one day past CACHE_UNUSED_DAYS unused
    cache = VectorCache(db, clock=clock)
    assert len(kept_digests(db)) == 3  # age counts from the file's newest use (day 29), not the clock
    cache.get_many("model-1", [A])  # used today
    cache.close()
    cache = VectorCache(db, clock=clock)
    assert kept_digests(db) == {("model-1", A)}
    np.testing.assert_array_equal(cache.get_many("model-1", [A, B])[A], VEC)
    cache.close()


def test_a_file_from_before_rows_were_dated_is_read_then_ages(tmp_path: Path) -> None:
    db, clock = tmp_path / VECTORS_FILENAME, ManualClock()
    with sqlite3.connect(db) as conn:
        conn.execute(UNDATED_TABLE)
        conn.execute("INSERT INTO vectors VALUES (?, ?, ?)", ("model-1", A, VEC.astype(np.float16).tobytes()))
    conn.close()
    cache = VectorCache(db, clock=clock)
    np.testing.assert_array_equal(cache.get_many("model-1", [A])[A], VEC)  # migrated: counts as used today
    cache.put_many("model-1", [(B, VEC)])
    assert set(cache.get_many("model-1", [A, B])) == {A, B}
    cache.close()
    clock.advance(timedelta(days=limits.CACHE_UNUSED_DAYS + 1))
    cache = VectorCache(db, clock=clock)
    cache.put_many("model-1", [(C, VEC)])  # the file in use again, a month on
    cache.close()
    VectorCache(db, clock=clock).close()
    assert kept_digests(db) == {("model-1", C)}


def test_a_table_of_another_shape_only_costs_embedding_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / VECTORS_FILENAME
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE vectors (name TEXT)")  # not ours: no column to key or date a row by
    conn.close()
    with caplog.at_level(logging.WARNING):
        cache = VectorCache(db)
    assert "vector cache" in caplog.text and "unusable" in caplog.text
    cache.put_many("model-1", [(A, VEC)])
    assert cache.get_many("model-1", [A]) == {}
    cache.close()


def test_a_prune_that_frees_much_of_the_file_gives_the_disk_back(tmp_path: Path) -> None:
    """Rows dropped on open leave free pages; without compaction the file keeps its peak size for good."""
    db, clock = tmp_path / VECTORS_FILENAME, ManualClock()
    big = np.zeros(1024, dtype=np.float32)  # 2 KB a row in float16
    cache = VectorCache(db, clock=clock)
    cache.put_many("model-1", [(i.to_bytes(16, "big"), big) for i in range(3000)])
    cache.close()
    clock.advance(timedelta(days=limits.CACHE_UNUSED_DAYS + 1))
    cache = VectorCache(db, clock=clock)
    cache.put_many("model-1", [(A, VEC)])  # a newer use: the 3,000 rows are a month older than the file's newest
    cache.close()
    peak = db.stat().st_size
    cache = VectorCache(db, clock=clock)
    cache.close()
    assert kept_digests(db) == {("model-1", A)}
    assert db.stat().st_size < peak / 10
