"""A save drafted before the dir's lock stages MEMORY.md beside its file, so both fsyncs share one
round (issue 42); the drafted index is published only when it is the text the lock's path builds,
so another save or a person's edit of MEMORY.md in between is never overwritten."""

from __future__ import annotations

from pathlib import Path

from memoryd.base.files import TEMP_DIRNAME
from memoryd.store.memdir import MemoryDir


def _text(name: str) -> str:
    return f"---\nname: {name}\ndescription: what {name} is about\ntype: project\n---\n{name} body.\n"


def _store(tmp_path: Path) -> MemoryDir:
    store = MemoryDir(tmp_path / "memory")
    for i in range(3):  # MEMORY.md written by memoryd: its layout is known
        store.save(name=f"Seed {i}", description=f"seed {i}", type="project", body="seed")
    return store


def _commit(store: MemoryDir, filename: str, text: str, draft: object = None) -> None:
    with store._lock:
        store._writes.commit(filename, lambda prior: text, draft=draft)  # type: ignore[arg-type]


def _leftovers(store: MemoryDir) -> list[str]:
    return sorted(p.name for p in (store.path / TEMP_DIRNAME).iterdir())


def test_a_lone_save_publishes_the_index_staged_with_its_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    draft = store._writes.draft("project_lone.md", lambda prior: _text("Lone"))
    assert draft is not None and draft.index is not None  # staged before the lock, its fsync started
    _commit(store, "project_lone.md", _text("Lone"), draft)
    draft.discard()
    index = (store.path / "MEMORY.md").read_text()
    assert draft.index.staged.published and index == "\n".join(draft.index.lines) + "\n"
    assert "project_lone.md" in index and (store.path / "project_lone.md").read_text() == _text("Lone")
    assert _leftovers(store) == []


def test_another_save_between_draft_and_commit_keeps_both_lines(tmp_path: Path) -> None:
    store = _store(tmp_path)
    draft = store._writes.draft("project_first.md", lambda prior: _text("First"))
    assert draft is not None and draft.index is not None
    _commit(store, "project_second.md", _text("Second"))  # another writer takes the lock first
    _commit(store, "project_first.md", _text("First"), draft)
    draft.discard()
    index = (store.path / "MEMORY.md").read_text()
    assert not draft.index.staged.published  # its lines lacked the second save's
    assert "project_first.md" in index and "project_second.md" in index
    assert (store.path / "project_first.md").read_text() == _text("First")
    assert _leftovers(store) == []


def test_a_hand_edit_of_memory_md_between_draft_and_commit_is_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    draft = store._writes.draft("project_lone.md", lambda prior: _text("Lone"))
    assert draft is not None and draft.index is not None
    index_path = store.path / "MEMORY.md"
    index_path.write_text(index_path.read_text() + "- my own note, written by hand\n")
    _commit(store, "project_lone.md", _text("Lone"), draft)
    draft.discard()
    index = index_path.read_text()
    assert not draft.index.staged.published
    assert "- my own note, written by hand" in index and "project_lone.md" in index
    assert _leftovers(store) == []
