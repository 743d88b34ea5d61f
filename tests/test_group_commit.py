"""Writes under load. Group commit: writers queued for a memory dir's lock share one MEMORY.md write, and each
answers only once MEMORY.md holds its line (issue 31: saves queued behind one writer, each
rewriting a 337 KB index, took p99 2.3 s under 20 clients)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from memoryd.base import limits
from memoryd.base.errors import Conflict
from memoryd.base.files import LOCK_FILENAME, SymlinkRefused, dir_lock
from memoryd.store.memdir import MemoryDir

THREADS, SAVES_EACH = 8, 15
REMOVED_ROUNDS, MADE_ROUNDS = 25, 80  # see _readers_listing


class _IndexRenames(FileSystemEventHandler):
    """Counts MEMORY.md being replaced (each publish renames a new file over it)."""

    def __init__(self) -> None:
        self.count = 0

    def on_moved(self, event: FileSystemEvent) -> None:
        if str(event.dest_path).endswith("/MEMORY.md"):
            self.count += 1

    def on_created(self, event: FileSystemEvent) -> None:  # a rename from the staging dir when it is not watched
        if str(event.src_path).endswith("/MEMORY.md"):
            self.count += 1


def _seeded(tmp_path: Path, count: int) -> MemoryDir:
    folder = tmp_path / "memory"
    folder.mkdir()
    for i in range(count):
        (folder / f"project_seed-{i}.md").write_text(
            f"---\nname: seed {i}\ndescription: seed note {i}\ntype: project\n---\n\nseed {i}\n"
        )
    store = MemoryDir(folder)
    store.rebuild_index()
    return store


def test_queued_saves_share_index_writes_and_each_answers_with_its_line(tmp_path: Path) -> None:
    store = _seeded(tmp_path, 300)
    renames = _IndexRenames()
    observer = Observer()
    observer.schedule(renames, str(store.path))
    observer.start()
    missing: list[str] = []
    start = threading.Barrier(THREADS)

    def writer(n: int) -> None:
        start.wait()
        for i in range(SAVES_EACH):
            result = store.save(
                name=f"writer {n} note {i}", description=f"note {i} of writer {n}", type="project", body=f"body {i}"
            )
            if (
                f"({result.memory.filename})" not in store.index_path.read_text()
            ):  # answered before its line was published
                missing.append(result.memory.filename)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    try:
        observer.stop()
        observer.join()
    finally:
        assert not any(t.is_alive() for t in threads), "a writer never got its answer"
    saves = THREADS * SAVES_EACH
    assert missing == []
    assert 0 < renames.count < saves * 0.75, f"{renames.count} index writes for {saves} queued saves: no group commit"
    assert store.rebuild_index() is False  # the index as published is what the files say
    assert len(store.all_headers()) == 300 + saves


def test_a_save_alone_publishes_its_line_at_once_and_a_queued_one_after_a_held_lock(tmp_path: Path) -> None:
    store = _seeded(tmp_path, 5)
    store.save(name="alone", description="nobody queues", type="user", body="b")
    assert "user_alone.md" in store.index_path.read_text()
    # A save queued behind a holder that writes nothing (a sweep, a team sync) is still published.
    done = threading.Event()
    with store._lock:
        worker = threading.Thread(
            target=lambda: (store.save(name="queued", description="behind a reader", type="user", body="b"), done.set())
        )
        worker.start()
        assert not done.wait(0.2)
    worker.join(timeout=10)
    assert done.is_set() and "user_queued.md" in store.index_path.read_text()


def test_a_save_reads_and_stages_before_the_lock_and_leaves_no_temp_file(tmp_path: Path) -> None:
    """The lock is held only to check the file did not move and rename: the read, the build and
    the staging happen before it; refused and unused drafts leave nothing in the staging dir."""
    store = _seeded(tmp_path, 5)
    first = store.save(name="style", description="tabs", type="feedback", body="use tabs").memory
    real = store._writes.read_prior
    held: list[bool] = []

    def noting_read(path: Path) -> tuple[str | None, tuple[int, int] | None]:
        held.append(store._lock._depth > 0)
        return real(path)

    store._writes.read_prior = noting_read  # type: ignore[method-assign]
    store.save(name="style", description="tabs v2", type="feedback", body="use tabs")
    assert held == [False]  # one read, before the lock, and its draft was used
    with pytest.raises(Conflict):
        store.save(name="style", description="tabs v3", type="feedback", body="x", expected=first.version)
    threads = [
        threading.Thread(
            target=lambda n=n: [
                store.save(name=f"busy {n}", description=f"v{i}", type="project", body=f"b{i}") for i in range(10)
            ]
        )
        for n in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert list((store.path / ".memoryd-tmp").iterdir()) == []
    assert "tabs v2" in first.path.read_text() and store.rebuild_index() is False


def _other_process_takes(lock_file: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from filelock import FileLock; FileLock(sys.argv[1]).acquire(timeout=float(sys.argv[2])); "
        "print('took it')"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(lock_file), str(timeout)], capture_output=True, text=True, timeout=60
    )


def test_the_dir_lock_excludes_another_process_and_is_let_go_after(tmp_path: Path) -> None:
    """The file lock is a flock another process (here `filelock`'s) sees, held only while a thread holds the dir."""
    lock = dir_lock(tmp_path / "memory")
    with lock:
        with lock:  # nested in one thread: one file lock
            assert _other_process_takes(tmp_path / "memory" / LOCK_FILENAME, 0).returncode != 0
        assert _other_process_takes(tmp_path / "memory" / LOCK_FILENAME, 0).returncode != 0
    assert _other_process_takes(tmp_path / "memory" / LOCK_FILENAME, 0).stdout.strip() == "took it"


def test_a_lock_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / LOCK_FILENAME).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(SymlinkRefused), dir_lock(tmp_path):
        pass
    assert dir_lock(tmp_path)._depth == 0  # nothing held after the refusal


@contextmanager
def _readers_listing(store: MemoryDir) -> Iterator[None]:
    """Two threads listing a big watched dir over and over while the body runs, taking turns with it
    every 10 µs: the windows between a write's statements open. With the in-flight logic of
    `HeaderCache.writing` taken out, the tests below failed in 50 of 50 and 20 of 20 runs beside
    another busy process on 2 cores (at 60 rounds the second missed 1 run of 20), where Python's 5 ms
    turns and 150 rounds took 2.5x as long and still missed the lost save in 1 run of 6."""
    store.set_watched(True)
    store.list()
    done = threading.Event()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)

    def reader() -> None:
        while not done.is_set():
            store.list()

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        done.set()
        for t in readers:
            t.join()


def test_a_read_beside_a_write_never_brings_back_what_the_write_removed(tmp_path: Path) -> None:
    """A read following a big watched dir's listing while a delete was between its table update and
    its unlink put the file back in the table, where it stayed, listed and recalled, until the next
    sweep a minute later (issue 31: seen as full index merges under the soak)."""
    store = _seeded(tmp_path, limits.STORE_WATCHED_TRUST_MIN_FILES)
    ghosts = []
    with _readers_listing(store):
        for i in range(REMOVED_ROUNDS):
            saved = store.save(name=f"brief note {i}", description=f"brief note {i}", type="project", body="gone soon")
            store.delete(saved.memory.filename)
            if saved.memory.filename in {h.filename for h in store.list()}:
                ghosts.append(saved.memory.filename)
    assert ghosts == []


def test_a_read_beside_a_write_never_loses_what_the_write_made(tmp_path: Path) -> None:
    """The other half: a listing read before a save and compared after it must not drop the new file."""
    store = _seeded(tmp_path, limits.STORE_WATCHED_TRUST_MIN_FILES)
    lost = []
    with _readers_listing(store):
        for i in range(MADE_ROUNDS):
            saved = store.save(
                name=f"fresh note {i}", description=f"fresh note {i}", type="project", body="here to stay"
            )
            if saved.memory.filename not in {h.filename for h in store.list()}:
                lost.append(saved.memory.filename)
    assert lost == []
