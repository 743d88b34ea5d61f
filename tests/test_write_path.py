"""The one write path: every writer (REST, extraction, dream, undo, daily log) has the same side
effects (file, index, metric by source, watch, listeners) and refuses a secret the same way;
a file changed since it was read is never overwritten blindly."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryd.base.errors import Conflict, SecretDetected
from memoryd.dream.plan import Action, Plan
from memoryd.dream.worker import RunningTask
from memoryd.extract.offline import Candidate
from memoryd.store.memdir import MemoryDir
from tests.conftest import LiveDaemon
from tests.support.clock import POLL_SECONDS

SECRET = "the token is ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"


def _metric(live: LiveDaemon, name: str, source: str | None = None) -> float:
    label = f'{{source="{source}"}}' if source else ""
    m = re.search(rf"^memoryd_{name}_total{re.escape(label)} (\S+)$", live.client.get("/metrics").text, re.M)
    return float(m.group(1)) if m else 0.0


def _api(live: LiveDaemon, store: MemoryDir, body: str) -> str | None:
    r = live.client.post(
        "/v1/memories",
        json={"cwd": _cwd[0], "name": "Api memory", "description": "written over REST", "type": "user", "body": body},
    )
    return r.json()["filename"] if r.status_code in (200, 201) else None


def _extract(live: LiveDaemon, store: MemoryDir, body: str) -> str | None:
    written, refused, _ = live.daemon.extraction._apply(
        store, [Candidate(name="Extracted memory", type="feedback", description="from a transcript", body=body)]
    )
    return written[0] if written else None


def _dream(live: LiveDaemon, store: MemoryDir, body: str) -> str | None:
    changes: list[dict[str, str]] = []
    task = RunningTask("run-table", store.path)
    live.daemon.dream.worker.apply(
        store,
        task,
        Action(op="write", name="Dreamt memory", type="project", description="from a consolidation", body=body),
        changes,
        Plan(),
    )
    return changes[0]["filename"] if changes else None


def _daily(live: LiveDaemon, store: MemoryDir, body: str) -> str | None:
    path = live.daemon.daily_log.append(store, body)
    return path.relative_to(store.path).as_posix()


@dataclass
class Writer:
    source: str
    write: Callable[[LiveDaemon, MemoryDir, str], str | None]
    indexed: bool = True


WRITERS = [
    Writer("api", _api),
    Writer("extract", _extract),
    Writer("dream", _dream),
    Writer("daily-log", _daily, indexed=False),
]
_cwd: list[str] = [""]


@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: w.source)
def test_every_writer_has_the_same_side_effects(live: LiveDaemon, project: Path, writer: Writer) -> None:
    _cwd[0] = str(project)
    live.daemon.settings.memory.watch = True
    store = live.daemon.stores.for_cwd(str(project))
    assert not store.path.exists() and not live.daemon.watcher.is_watching(store.path)
    heard: list[str] = []
    store.on_change.append(lambda s, filename: heard.append(filename))
    before = _metric(live, "memories_written", writer.source)
    filename = writer.write(live, store, "A plain fact with a [[related-note]] link.")
    assert filename is not None and (store.path / filename).is_file()
    assert _metric(live, "memories_written", writer.source) == before + 1
    assert live.daemon.watcher.is_watching(store.path), "the dir's first write registers the watch"
    assert heard == [filename]
    index = (store.path / "MEMORY.md").read_text() if (store.path / "MEMORY.md").exists() else ""
    assert (f"]({filename})" in index) == writer.indexed
    assert not list(store.path.rglob(".tmp-*"))

    refused_before = _metric(live, "secrets_refused", writer.source)
    files_before = sorted(p.name for p in store.path.rglob("*"))
    texts_before = {p: p.read_bytes() for p in store.path.rglob("*.md")}
    with pytest.raises(SecretDetected) if writer.source == "daily-log" else _nothing():
        assert writer.write(live, store, SECRET) is None
    assert _metric(live, "secrets_refused", writer.source) == refused_before + 1
    assert sorted(p.name for p in store.path.rglob("*")) == files_before
    assert {p: p.read_bytes() for p in store.path.rglob("*.md")} == texts_before


def test_a_dir_another_program_made_is_watched_at_its_next_use(live: LiveDaemon, project: Path) -> None:
    """Claude Code writes its own memories: a dir the daemon saw before it existed is watched once it is
    there, so its hand edits are heard by name (unwatched, a big one was swept every second)."""
    store = live.daemon.stores.for_cwd(str(project))
    assert not store.path.exists() and not live.daemon.watcher.is_watching(store.path)
    store.path.mkdir(parents=True)
    (store.path / "user_role.md").write_text("---\nname: Role\ndescription: what I do\ntype: user\n---\nI review.\n")
    heard: list[str] = []
    store.on_change.append(lambda s, filename: heard.append(filename))
    r = live.client.post("/v1/recall", json={"cwd": str(project), "query": "what do I review", "session_id": "s1"})
    assert r.status_code == 200
    assert live.daemon.watcher.is_watching(store.path) and store.watched
    (store.path / "user_role.md").write_text("---\nname: Role\ndescription: what I do\ntype: user\n---\nI ship.\n")
    deadline = time.monotonic() + 10
    while "user_role.md" not in heard and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    assert "user_role.md" in heard, "the watcher reports the hand edit by name"


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_dream_backup_is_recorded_by_the_store_and_undo_goes_through_it(live: LiveDaemon, project: Path) -> None:
    store = live.daemon.stores.for_cwd(str(project))
    kept = store.save(name="Kept", description="an existing memory", type="user", body="original body").memory
    changes: list[dict[str, str]] = []
    task = RunningTask("run-undo", store.path)
    live.daemon.dream.worker.apply(
        store,
        task,
        Action(op="write", filename=kept.filename, name="Kept", type="user", description="rewritten", body="new body"),
        changes,
        Plan(),
    )
    manifest = json.loads((live.daemon.dream.records.backups / "run-undo" / "manifest.json").read_text())
    assert set(manifest) == {kept.filename} and "original body" in manifest[kept.filename]
    before = _metric(live, "memories_written", "undo")
    live.daemon.dream.records.restore(store, "run-undo")
    assert store.get(kept.filename).body == "original body"
    assert _metric(live, "memories_written", "undo") == before + 1


def test_forget_counts_and_a_missing_memory_creates_nothing(live: LiveDaemon, project: Path) -> None:
    store = live.daemon.stores.for_cwd(str(project))
    r = live.client.delete("/v1/memories/user_nothing.md", params={"cwd": str(project)})
    assert r.status_code == 404 and not store.path.exists(), "no memory dir, no lock file"
    filename = store.save(name="Gone", description="to be forgotten", type="user", body="b").memory.filename
    before = _metric(live, "memories_deleted")
    assert live.client.delete(f"/v1/memories/{filename}", params={"cwd": str(project)}).status_code == 204
    assert _metric(live, "memories_deleted") == before + 1 and f"]({filename})" not in store.index_path.read_text()
    assert live.client.delete("/v1/memories/user_nothing.md", params={"cwd": str(project)}).status_code == 404
    assert sorted(p.name for p in store.path.iterdir()) == [".memoryd-tmp", ".memoryd.lock", "MEMORY.md"]


def test_rest_expected_version_refuses_a_stale_save(live: LiveDaemon, project: Path) -> None:
    payload = {
        "cwd": str(project),
        "name": "Ports",
        "description": "dev server port",
        "type": "project",
        "body": "port 3000",
    }
    saved = live.client.post("/v1/memories", json=payload).json()
    got = live.client.get(f"/v1/memories/{saved['filename']}", params={"cwd": str(project)}).json()
    assert got["version"] == saved["version"] and got["version"]
    path = Path(saved["path"])
    path.write_text(path.read_text().replace("port 3000", "port 4000 (edited by hand)"))  # someone edits after our read
    r = live.client.post("/v1/memories", json={**payload, "body": "port 3001", "expected_version": got["version"]})
    assert (
        r.status_code == 409
        and r.json()["error"]["code"] == "conflict"
        and "read it again" in r.json()["error"]["message"]
    )
    assert "port 4000 (edited by hand)" in path.read_text()
    fresh = live.client.get(f"/v1/memories/{saved['filename']}", params={"cwd": str(project)}).json()
    r = live.client.post("/v1/memories", json={**payload, "body": "port 3001", "expected_version": fresh["version"]})
    assert r.status_code == 200 and "port 3001" in path.read_text()
    r = live.client.delete(
        f"/v1/memories/{saved['filename']}", params={"cwd": str(project), "expected_version": fresh["version"]}
    )
    assert r.status_code == 409 and path.exists()


def test_extraction_never_overwrites_an_edit_made_after_its_read(tmp_path: Path) -> None:
    store = MemoryDir(tmp_path / "memory")
    first = store.save(name="Style", description="tabs", type="feedback", body="use tabs").memory
    first.path.write_text(first.path.read_text().replace("use tabs", "use spaces (hand edit)"))
    with pytest.raises(Conflict):
        store.save(
            name="Style",
            description="tabs",
            type="feedback",
            body="use tabs!",
            source="extract",
            expected=first.version,
        )
    assert "use spaces (hand edit)" in first.path.read_text()


def test_a_save_keeps_the_edit_made_while_it_built_its_text(tmp_path: Path) -> None:
    """The file changes between the store's read and its write: it is re-read, unknown keys kept."""
    store = MemoryDir(tmp_path / "memory")
    memory = store.save(name="Style", description="tabs", type="feedback", body="use tabs").memory
    real = store._writes.read_prior
    calls = {"n": 0}

    def racing_read(path: Path) -> tuple[str | None, tuple[int, int] | None]:
        result = real(path)
        calls["n"] += 1
        if calls["n"] == 1:  # an editor adds a key right after memoryd read the file
            path.write_text(path.read_text().replace("type: feedback\n", "type: feedback\nowner: ana\n"))
        return result

    store._writes.read_prior = racing_read  # type: ignore[method-assign]
    store.save(name="Style", description="tabs v2", type="feedback", body="use tabs")
    assert calls["n"] == 2 and "owner: ana" in memory.path.read_text() and "tabs v2" in memory.path.read_text()
