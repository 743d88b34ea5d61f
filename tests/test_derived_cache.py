"""What a memory applies to is derived once per text, not once per daemon start: kept in a SQLite file under
$MEMORYD_HOME by (derive version, text digest), read back by a restarted daemon (a real subprocess, real files),
and derived again once the derive code or its word lists change. A request never derives a whole unknown store."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

import memoryd
from memoryd.base import limits
from memoryd.base.clock import ManualClock
from memoryd.base.files import atomic_write
from memoryd.recall.applies_index import DERIVE_INLINE_MAX, AppliesIndex
from memoryd.recall.derived_cache import DERIVED_FILENAME, DerivedCache, decoded, encoded
from memoryd.recall.indexes import StoreIndexes
from memoryd.relevance.applies_derive import derive
from memoryd.store import MemoryDir
from memoryd.store.frontmatter import render_frontmatter

CORPUS = Path(__file__).resolve().parent.parent / "bench" / "corpus" / "data"
RULES = [
    ("Package manager", "Use pnpm, never npm: the lockfile is pnpm-lock.yaml", "Run `pnpm install`."),
    ("Migrations are append-only", "Never edit an applied migration in db/migrations/", "Add a new one."),
    ("Dates", "Use date-fns, not moment; no new moment imports", "`import { format } from 'date-fns'`"),
    ("Plain CSS", "Write plain CSS, never inline styles or raw hex values like #3b82f6", ""),
]
# A restarted daemon: a new process that indexes the store and prints what each memory applies to.
RESTARTED = """
import json, sys
from pathlib import Path
from memoryd.recall.applies_index import AppliesIndex
from memoryd.recall.derived_cache import DerivedCache, encoded
from memoryd.recall.indexes import StoreIndexes
from memoryd.store import MemoryDir
store, kept = MemoryDir(Path(sys.argv[1])), DerivedCache(Path(sys.argv[2]))
indexes = StoreIndexes()
view = AppliesIndex(kept).view(store, indexes.refresh(store, wait=True), wait=True)
print(json.dumps({"version": kept.version, "applies": {fn: encoded(a) for fn, a in view.applies.items()}}))
"""


def write_rules(memdir: Path, rules: list[tuple[str, str, str]]) -> None:
    memdir.mkdir(parents=True, exist_ok=True)
    for i, (name, description, body) in enumerate(rules):
        meta = {"name": name, "description": description, "type": "feedback"}
        atomic_write(memdir / f"feedback_rule-{i}.md", render_frontmatter(meta, body))


def restarted(memdir: Path, db: Path, package_root: Path | None = None) -> dict[str, object]:
    env = dict(os.environ)
    if package_root is not None:
        env["PYTHONPATH"] = str(package_root)
    out = subprocess.run(
        [sys.executable, "-c", RESTARTED, str(memdir), str(db)],
        capture_output=True,
        text=True,
        env=env,
        cwd=memdir.parent,
        timeout=120,
        check=True,
    )
    return dict(json.loads(out.stdout))


def rows(db: Path) -> list[tuple[str, bytes, str]]:
    with sqlite3.connect(db) as conn:
        return [(v, bytes(d), a) for v, d, a in conn.execute("SELECT version, digest, applies FROM derived")]


def test_a_derivation_reads_back_equal() -> None:
    texts = [(m["name"], m["description"], m["body"], m["type"]) for m in _corpus_memories()] or [
        (*r, "feedback") for r in RULES
    ]
    for text in texts:
        applies = derive(*text)
        assert decoded(encoded(applies)) == applies, text[0]


def _corpus_memories() -> list[dict[str, str]]:
    return [m for p in sorted(CORPUS.glob("*.json"))[:6] for m in json.loads(p.read_text())["memories"]]


def test_a_restarted_daemon_reads_back_what_an_earlier_one_derived(tmp_path: Path) -> None:
    memdir, db = tmp_path / "memory", tmp_path / "home" / DERIVED_FILENAME
    write_rules(memdir, RULES)
    first = restarted(memdir, db)
    kept = rows(db)
    assert len(kept) == len(RULES) and {v for v, _, _ in kept} == {first["version"]}
    # a row the earlier daemon kept, changed on disk: what the restarted one gives is read, not derived
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE derived SET applies = ? WHERE digest = ?", ('{"commands":["from-disk"]}', kept[0][1]))
    second = restarted(memdir, db)
    assert second["version"] == first["version"]
    changed = {fn for fn, a in second["applies"].items() if a != first["applies"][fn]}  # type: ignore[index]
    assert len(changed) == 1
    assert json.loads(second["applies"][changed.pop()])["commands"] == ["from-disk"]  # type: ignore[index]
    assert len(rows(db)) == len(RULES)  # nothing derived, nothing added


def test_a_change_of_the_word_lists_derives_again(tmp_path: Path) -> None:
    memdir, db = tmp_path / "memory", tmp_path / "home" / DERIVED_FILENAME
    write_rules(memdir, RULES)
    first = restarted(memdir, db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE derived SET applies = ?", ('{"commands":["from-disk"]}',))
    # the same package, one data file's bytes changed (a comment: what it derives stays the same)
    package = tmp_path / "package"
    shutil.copytree(Path(memoryd.__file__).parent, package / "memoryd", ignore=shutil.ignore_patterns("__pycache__"))
    words = package / "memoryd" / "relevance" / "data" / "words.toml"
    words.write_bytes(words.read_bytes() + b"\n# a comment\n")
    second = restarted(memdir, db, package_root=package)
    assert second["version"] != first["version"]
    assert second["applies"] == first["applies"]  # derived again: no row of the old version was read
    assert {v for v, _, _ in rows(db)} == {second["version"]}  # and the old rows are gone
    assert len(rows(db)) == len(RULES)


def test_a_request_does_not_derive_a_whole_store(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    many = DERIVE_INLINE_MAX + 20
    write_rules(memdir, [(f"{name} {i}", d, b) for i in range(many // len(RULES) + 1) for name, d, b in RULES][:many])
    store, indexes = MemoryDir(memdir), StoreIndexes()
    item = indexes.refresh(store, wait=True)
    index = AppliesIndex(DerivedCache(tmp_path / DERIVED_FILENAME))
    assert index.view(store, item).applies == {}  # the view as it stands (none yet): a thread derives them
    deadline = time.monotonic() + 60
    while len(index.view(store, item).applies) < many:
        assert time.monotonic() < deadline, "the background derivation never finished"
        time.sleep(0.05)
    view = index.view(store, item)
    assert view.applies["feedback_rule-0.md"].commands == derive(*RULES[0], "feedback").commands
    index.close()


@pytest.mark.parametrize("path", [None, "unwritable"])
def test_without_a_usable_file_nothing_is_kept(tmp_path: Path, path: str | None) -> None:
    target = None
    if path is not None:
        (tmp_path / "ro").mkdir()
        target = tmp_path / "ro" / "is-a-dir"
        target.mkdir()  # a directory where the file would be: SQLite cannot open it
    kept = DerivedCache(target)
    kept.put_many([(b"0" * 16, derive(*RULES[0]))])
    assert kept.get_many([b"0" * 16]) == {}


# The exact table a cache file held before rows were dated (what every existing $MEMORYD_HOME has).
UNDATED_TABLE = (
    "CREATE TABLE IF NOT EXISTS derived (version TEXT NOT NULL, digest BLOB NOT NULL, applies TEXT NOT NULL, "
    "PRIMARY KEY (version, digest))"
)
A, B, C = b"a" * 16, b"b" * 16, b"c" * 16


def updates_counted(db: Path) -> sqlite3.Connection:
    """A connection to `db` whose `updates` table counts UPDATEs of derived rows (a trigger: same-value ones too)."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE updates (n INTEGER NOT NULL)")
    conn.execute("INSERT INTO updates VALUES (0)")
    conn.execute("CREATE TRIGGER counted AFTER UPDATE ON derived BEGIN UPDATE updates SET n = n + 1; END")
    return conn


def updates(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT n FROM updates").fetchone()[0])


def test_rows_unused_for_a_month_are_dropped_on_open_and_others_kept(tmp_path: Path) -> None:
    db, clock, applies = tmp_path / DERIVED_FILENAME, ManualClock(), derive(*RULES[0])
    first = DerivedCache(db, clock=clock)
    first.put_many([(A, applies), (B, applies)])  # B: an edited memory's old text, or a project not opened since
    first.close()
    clock.advance(timedelta(days=20))
    again = DerivedCache(db, clock=clock)
    assert set(again.get_many([A, B])) == {A, B}  # a week unopened is no reason to go: both read back (and marked)
    again.close()
    clock.advance(timedelta(days=limits.CACHE_UNUSED_DAYS))
    DerivedCache(db, clock=clock).close()
    assert len(rows(db)) == 2  # exactly CACHE_UNUSED_DAYS unused: kept
    later = DerivedCache(db, clock=clock)
    later.get_many([A])
    later.close()
    clock.advance(timedelta(days=1))
    busy = DerivedCache(db, clock=clock)
    busy.get_many([A])  # another day of use, by the file's own clock
    busy.close()
    last = DerivedCache(db, clock=clock)
    assert [d for _, d, _ in rows(db)] == [A]  # B went unused one day longer
    assert last.get_many([A, B]) == {A: applies}
    last.close()


def test_a_file_nobody_used_for_months_keeps_its_rows(tmp_path: Path) -> None:
    """Age counts from the file's newest use, not the clock: a daemon that served every row from memory for two
    months, or a machine left off, does not derive its whole store again at the next start."""
    db, clock, applies = tmp_path / DERIVED_FILENAME, ManualClock(), derive(*RULES[0])
    first = DerivedCache(db, clock=clock)
    first.put_many([(A, applies), (B, applies)])
    first.close()
    clock.advance(timedelta(days=2 * limits.CACHE_UNUSED_DAYS))
    again = DerivedCache(db, clock=clock)
    assert set(again.get_many([A, B])) == {A, B}
    again.close()


def test_a_read_marks_its_row_once_a_day(tmp_path: Path) -> None:
    db, clock = tmp_path / DERIVED_FILENAME, ManualClock()
    kept = DerivedCache(db, clock=clock)
    kept.put_many([(A, derive(*RULES[0]))])
    counted = updates_counted(db)
    assert A in kept.get_many([A]) and updates(counted) == 0  # dated today when written: nothing written
    clock.advance(timedelta(days=1))
    assert A in kept.get_many([A]) and updates(counted) == 1  # a new day: the row is marked once...
    assert A in kept.get_many([A, B]) and updates(counted) == 1  # ...and not again that day
    counted.close()
    kept.close()


def test_a_file_from_before_rows_were_dated_is_read_then_ages(tmp_path: Path) -> None:
    db, clock, applies = tmp_path / DERIVED_FILENAME, ManualClock(), derive(*RULES[0])
    with sqlite3.connect(db) as conn:
        conn.execute(UNDATED_TABLE)
        conn.execute("INSERT INTO derived VALUES (?, ?, ?)", (DerivedCache(None).version, A, encoded(applies)))
    conn.close()
    kept = DerivedCache(db, clock=clock)
    assert kept.get_many([A]) == {A: applies}  # migrated: the old row counts as used today
    kept.put_many([(B, applies)])
    assert set(kept.get_many([A, B])) == {A, B}
    kept.close()
    clock.advance(timedelta(days=limits.CACHE_UNUSED_DAYS + 1))
    later = DerivedCache(db, clock=clock)
    later.put_many([(C, applies)])  # the file in use again, a month on
    later.close()
    DerivedCache(db, clock=clock).close()
    assert [d for _, d, _ in rows(db)] == [C]
