"""Issue 42 item 3: how the embedding engine shares the two cores with requests. A prompt is embedded on
one engine thread, memories on both; a request sweeps its store once."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memoryd.recall.dense import ENGINE_THREADS, QUERY_THREADS, Encoder
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings
from tests.test_recall_dense import _toy_backend, needs_model


def _threads() -> int:
    """This process's threads, once no thread is starting or ending (the count stays the same for 0.2 s)."""
    count, deadline = -1, time.monotonic() + 10
    while (now := len(os.listdir("/proc/self/task"))) != count and time.monotonic() < deadline:
        count = now
        time.sleep(0.2)
    return count


@needs_model
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every team is one thread")
def test_a_prompt_is_embedded_on_one_engine_thread_and_a_batch_on_both() -> None:
    """OpenMP keeps the workers a thread's parallel regions started while that thread lives: a query
    starts none (a team of one: two threads met at ~100 barriers per query), a batch starts one."""
    encoder = Encoder()
    encoder.load()
    backend = encoder.backend
    assert backend is not None and QUERY_THREADS == 1 and ENGINE_THREADS == 2
    counts: list[int] = []
    vectors: list[np.ndarray] = []

    def request_then_batch() -> None:
        counts.append(_threads())
        vectors.append(backend.query("where is the staging cache kept"))
        counts.append(_threads())
        backend.team(ENGINE_THREADS)
        backend.passages(["one memory", "another memory"])
        counts.append(_threads())

    t = threading.Thread(target=request_then_batch)
    t.start()
    t.join(60)
    assert counts[1] == counts[0] and counts[2] == counts[0] + ENGINE_THREADS - 1
    assert vectors[0].shape == (384,) and abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-3


def test_a_recall_sweeps_its_store_once(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home))
    store = daemon.stores.for_cwd(str(project))
    store.save(name="Staging VPN", description="staging deploys need the VPN", type="project", body="vpn")
    daemon.recall.recall(str(project), "staging vpn deploys", "s0")
    version = daemon.recall.indexes.refresh(store).version
    before = daemon.recall.indexes.sweeps
    daemon.recall.recall(str(project), "how do staging deploys work", "s1")
    assert daemon.recall.indexes.sweeps == before + 1  # ranking and what the prompt names: one stat of each file
    # a sweep that finds nothing changed leaves the index's version (what memories apply to is not derived again)
    assert daemon.recall.indexes.refresh(store).version == version
    (store.path / "project_by-hand.md").write_text(
        "---\nname: Written by hand\ndescription: staging deploys run at noon\ntype: project\n---\nnoon\n",
        encoding="utf-8",
    )
    names = [m.name for m in daemon.recall.recall(str(project), "when do staging deploys run", "s2").memories]
    assert "Written by hand" in names  # a hand edit is still seen by the next request
    daemon.recall.close()
    daemon.state.close()


def test_memories_are_embedded_on_both_engine_threads_even_by_a_thread_that_embedded_a_prompt(
    home: Path, project: Path
) -> None:
    """The engine's team size belongs to the calling thread: a request's thread runs its prompt on one,
    then may embed a memory changed by hand (or owed by a save) — that batch goes back to both."""
    teams: list[int] = []
    team = threading.local()
    daemon = Daemon(make_settings(home))
    indexes = daemon.recall.indexes

    def passages(texts: list[str]) -> np.ndarray:
        teams.append(getattr(team, "threads", 0))
        return np.stack([np.array([1.0, 0.0], dtype=np.float32) for _ in texts])

    indexes.encoder.backend = replace(
        _toy_backend([]), passages=passages, team=lambda threads: setattr(team, "threads", threads)
    )
    store = daemon.stores.for_cwd(str(project))
    fn = store.save(name="Staging VPN", description="staging deploys need the VPN", type="project", body="v").memory
    team.threads = QUERY_THREADS  # as after this thread embedded a prompt
    indexes.embed_now(indexes.refresh(store), [fn.filename])
    assert teams == [ENGINE_THREADS]
    daemon.recall.close()
    daemon.state.close()
