"""The recall index at scale (issue 17): a new or changed file costs one read, a big change is
built in the background while requests are answered, and the compact index ranks like a fresh one."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from memoryd.base.files import atomic_write
from memoryd.recall import indexes as indexes_module
from memoryd.recall.indexes import read_memory
from memoryd.recall.ranker import LexicalIndex, analyse
from memoryd.store.frontmatter import render_frontmatter
from tests.conftest import LiveDaemon
from tests.conftest import recall_api as recall
from tests.conftest import save_memory as save

WORDS = (
    "deploy build cache database migration schema index queue worker retry timeout token login proxy docker helm"
).split()


def write_files(memdir: Path, n: int, prefix: str = "note") -> None:
    memdir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    for i in range(n):
        words = rng.sample(WORDS, 6)
        meta = {"name": f"{prefix} {' '.join(words[:2])} {i}", "description": " ".join(words), "type": "project"}
        atomic_write(
            memdir / f"project_{prefix}-{i}.md",
            render_frontmatter(meta, " ".join(rng.choice(WORDS) for _ in range(20))),
        )


def test_a_new_file_costs_one_read_not_a_rebuild(live: LiveDaemon, project: Path) -> None:
    store = live.daemon.stores.for_cwd(str(project))
    write_files(store.path, 200)
    indexes = live.daemon.recall.indexes
    assert recall(live, project, "database migration schema")["memories"]
    before = indexes.reads
    fn = save(live, project, "Zeppelin hangar", "The zeppelin hangar keeps the quokka")
    got = recall(live, project, "where is the zeppelin hangar", session="s2")["memories"]
    assert [m["filename"] for m in got] == [fn]
    assert indexes.reads - before == 1
    (store.path / fn).write_text((store.path / fn).read_text().replace("quokka", "wombat"))  # a hand edit
    store.changed_on_disk(fn)  # what the watcher reports
    before = indexes.reads
    assert [m["filename"] for m in recall(live, project, "zeppelin hangar wombat", session="s3")["memories"]] == [fn]
    assert indexes.reads - before == 1


def test_recall_and_the_store_hold_one_copy_of_each_header(live: LiveDaemon, project: Path) -> None:
    store = live.daemon.stores.for_cwd(str(project))
    write_files(store.path, 50)
    listed = {h.filename: h for h in store.list()}  # the store reads them first: recall meets its table's copies
    assert recall(live, project, "database migration schema")["memories"]
    item = live.daemon.recall.indexes.refresh(store, wait=True)
    assert set(listed) == set(item.by_name) and len(listed) == 50
    assert all(listed[fn] is item.by_name[fn] for fn in listed)  # the same objects, not equal copies
    table = store._headers.table  # ... and the same stat keys (issue 42: ~2 MB at 20,000)
    assert all(item.files[fn] is table.get(fn)[0] for fn in listed)  # type: ignore[index]


def test_no_request_waits_on_a_build(live: LiveDaemon, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = live.daemon.stores.for_cwd(str(project))
    write_files(store.path, indexes_module.INLINE_MAX_CHANGES + 50)
    release = threading.Event()
    real_read = indexes_module.read_memory

    def held_read(path: Path):  # type: ignore[no-untyped-def]
        release.wait(timeout=15)  # the build is held until the request has been answered
        return real_read(path)

    monkeypatch.setattr(indexes_module, "read_memory", held_read)
    first = recall(live, project, "database migration schema")
    release.set()
    # a store never read before is indexed in the background: the request is answered from the
    # index as it stands (empty here), never "skipped" (issue 27)
    assert first["memories"] == [] and first["method"] != "skipped" and "indexing" not in first["reason"]
    live.daemon.recall.indexes.refresh(store, wait=True)
    assert recall(live, project, "database migration schema", session="s2")["memories"]


def test_list_endpoint_paginates(live: LiveDaemon, project: Path) -> None:
    write_files(live.daemon.stores.for_cwd(str(project)).path, 25)
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = live.client.get("/v1/memories", params={"cwd": str(project), "limit": 10, "offset": offset}).json()
        assert page["total"] == 25 and len(page["memories"]) <= 10
        seen += [m["filename"] for m in page["memories"]]
        offset = page["next_offset"]
    assert len(seen) == len(set(seen)) == 25
    assert live.client.get("/v1/memories", params={"cwd": str(project), "limit": 0}).status_code == 422


def test_replacing_and_removing_ranks_like_a_fresh_index() -> None:
    rng = random.Random(3)
    docs = {f"m{i}.md": " ".join(rng.choice(WORDS) for _ in range(8)) for i in range(3000)}
    churned = LexicalIndex()
    for fn, text in docs.items():
        churned.put(analyse(fn, fn, text, ""))
    for fn in list(docs)[:2500]:  # enough churn to compact at least once
        docs[fn] = " ".join(rng.choice(WORDS) for _ in range(8))
        churned.put(analyse(fn, fn, docs[fn], ""))
    for fn in list(docs)[2500:2800]:
        churned.remove(fn)
        del docs[fn]
    fresh = LexicalIndex()
    for fn, text in docs.items():
        fresh.put(analyse(fn, fn, text, ""))
    assert len(churned) == len(fresh) == 2700
    for q in ("database migration", "helm proxy docker", "token login retry timeout"):
        assert churned.rank(q, k=20) == fresh.rank(q, k=20)


def test_words_no_memory_holds_any_more_are_forgotten() -> None:
    """Memories that come and go, each with its own word (a ticket number, a name), leave a
    vocabulary the size of the live ones, and the index still ranks like a fresh one."""
    rng = random.Random(5)
    churned, live = LexicalIndex(), {}
    for i in range(6000):
        fn = f"m{i}.md"
        live[fn] = " ".join(rng.choice(WORDS) for _ in range(6)) + f" ticket{i}x"
        churned.put(analyse(fn, fn, live[fn], ""))
        if len(live) > 500:
            gone = next(iter(live))
            churned.remove(gone)
            del live[gone]
    fresh = LexicalIndex()
    for fn, text in live.items():
        fresh.put(analyse(fn, fn, text, ""))
    assert churned.vocabulary < fresh.vocabulary + 1100  # the unique words of at most one compaction's tombstones
    for q in ("database migration", "ticket5990x docker", "ticket5999x"):
        assert churned.rank(q, k=20) == fresh.rank(q, k=20)


@pytest.mark.parametrize(
    "meta",
    [
        {"name": "Colon: in the name", "description": "has 'quotes' and # hash", "type": "user"},
        {"name": "yes", "description": "  leading spaces and ünïcode", "type": "feedback"},
        {"name": "- dash first", "description": "[brackets] first", "type": "reference"},
        {"name": "Multi\nline?", "description": "123", "type": "project"},
    ],
)
def test_fast_frontmatter_reads_what_the_store_reads(tmp_path: Path, meta: dict[str, str]) -> None:
    from memoryd.store import MemoryDir

    path = tmp_path / f"{meta['type']}_tricky.md"
    atomic_write(path, render_frontmatter(meta, "the body"))
    got = read_memory(path)
    assert got is not None
    header = MemoryDir(tmp_path).all_headers()[0]
    assert (got[0].name, got[0].description, got[0].type) == (header.name, header.description, header.type)
    assert got[1] == "the body\n"


def test_recall_reads_claude_codes_dialect(live: LiveDaemon, project: Path) -> None:
    """A file the agent wrote in Claude Code's format (any name, `metadata.type`) is recalled like memoryd's own."""
    folder = live.daemon.stores.for_cwd(str(project)).path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pnpm-only.md").write_text(
        "---\nname: pnpm-only\ndescription: Always use pnpm for installs\nmetadata:\n  type: feedback\n---\n"
        "Use pnpm, never npm: the lockfile is pnpm-lock.yaml.\n"
    )
    answer = live.client.post(
        "/v1/recall", json={"cwd": str(project), "query": "should installs use npm or pnpm?", "session_id": "s-cc"}
    ).json()
    assert [(m["filename"], m["type"]) for m in answer["memories"]] == [("pnpm-only.md", "feedback")], answer


def test_a_write_that_fails_half_way_starts_the_index_over_from_the_files(live: LiveDaemon, project: Path) -> None:
    """A put that raised half-way (issue 31's soak: a reader's view of a posting array outlived the
    lock, BufferError) left the index's arrays out of step and every later recall answered 500."""
    store = live.daemon.stores.for_cwd(str(project))
    first = save(live, project, "Zeppelin hangar", "The zeppelin hangar keeps the quokka")
    assert [m["filename"] for m in recall(live, project, "where is the zeppelin hangar")["memories"]] == [first]
    index = live.daemon.recall.indexes.refresh(store).index
    held = memoryview(index._tail[index._term_id["zeppelin"]][0])  # a buffer still exported: growing this array fails
    try:
        second = save(live, project, "Zeppelin fuel", "The zeppelin runs on helium from the quokka depot")
        got = recall(live, project, "zeppelin quokka helium", session="s2")["memories"]
    finally:
        held.release()
    assert second in [m["filename"] for m in got]
    got = recall(live, project, "zeppelin hangar quokka", session="s3")["memories"]
    assert {first, second} == {m["filename"] for m in got}
    assert live.daemon.recall.indexes.refresh(store).index is not index  # started over, not patched
