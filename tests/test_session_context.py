"""What a session works on and which memory files it holds, learned by the transcript pipeline as
it reads each line once (issue 27 item 5); recall never skipped for indexing, and a saved memory
ranked with its vector at once (item 4); a FIFO named as a transcript never wedges a worker (#31)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.transcripts.context import COMMANDS_KEPT, PATHS_KEPT, SessionContexts
from memoryd.transcripts.pipeline import TranscriptPipeline
from tests.conftest import LiveDaemon, recall_api, save_memory
from tests.support.transcripts import new_session
from tests.test_hooks import context, hook  # the hook over HTTP and what it added to the context


def test_the_pipeline_learns_paths_commands_and_held_files(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "state.db")
    pipeline = TranscriptPipeline(state=db, metrics=Metrics())
    contexts = SessionContexts(db)
    pipeline.subscribe(contexts)
    s = new_session(tmp_path / "projects", "/work/app")
    memdir = "/home/u/.claude/projects/-work-app/memory"
    s.user("fix the login flow")
    s.assistant(
        "Reading.",
        tools=[
            ("Read", {"file_path": f"{memdir}/feedback_sql.md"}),
            ("Grep", {"pattern": "def login", "path": "src/auth"}),
        ],
    )
    s.tool_result(f"see also {memdir}/project_auth.md: the auth notes")
    s.append(
        {
            **s._envelope("attachment"),
            "attachment": {
                "type": "relevant_memories",
                "memories": [{"path": f"{memdir}/user_role.md", "content": "x"}],
            },
        }
    )
    s.assistant("", tools=[("Bash", {"command": "API_KEY=sk-ant-api03-" + "a" * 90 + " pytest tests/test_auth.py"})])
    for i in range(PATHS_KEPT + 5):
        s.assistant("", tools=[("Edit", {"file_path": f"/work/app/src/m{i}.py", "old_string": "a", "new_string": "b"})])
    for i in range(COMMANDS_KEPT + 3):
        s.assistant("", tools=[("Bash", {"command": f"make step{i}"})])
    pipeline.advance(s.path)

    got = contexts.get(s.session_id)
    assert got is not None
    assert got.held_in(memdir) == {"feedback_sql.md", "project_auth.md", "user_role.md"}
    assert got.held_in("/elsewhere/memory") == set()
    assert (
        len(got.paths) == PATHS_KEPT and got.paths[-1] == f"/work/app/src/m{PATHS_KEPT + 4}.py"
    )  # most recent last, bounded
    assert len(got.commands) == COMMANDS_KEPT and got.commands[-1] == f"make step{COMMANDS_KEPT + 2}"
    # read once: a restart (a new subscriber on the same state) knows the same without reading again
    again = SessionContexts(db)
    assert again.get(s.session_id) == got
    assert not any("sk-ant" in c for c in SessionContexts(db).get(s.session_id).commands)  # type: ignore[union-attr]
    assert contexts.get("another-session") is None


def test_the_hook_excludes_memories_the_session_holds_without_reading_the_transcript(
    live: LiveDaemon, project: Path
) -> None:
    store = live.daemon.stores.for_cwd(str(project))
    read = save_memory(
        live,
        project,
        "Orders SQL rule",
        "orders SQL is hand-written in queries/, never an ORM",
        "queries/orders.sql holds it",
    )
    other = save_memory(
        live, project, "Orders endpoint rule", "orders endpoints return SQL rows as JSON lists", "JSON lists"
    )
    root = live.daemon.settings.transcript_roots[0]
    s = new_session(root, str(project))
    s.user("look at the orders rules")
    s.assistant(
        "Reading the memory.",
        tools=[("Read", {"file_path": str(store.path / read)}), ("Bash", {"command": "git log -3 --stat"})],
    )
    s.tool_result("orders SQL is hand-written")
    base = {"session_id": s.session_id, "transcript_path": str(s.path), "cwd": str(project)}
    answer = context(
        hook(live, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "write the orders SQL endpoint rows"})
    )
    assert other in answer and read not in answer  # the one it read is in its context already
    learned = live.daemon.transcripts.session_context(s.session_id)
    assert (
        learned is not None and learned.paths == [str(store.path / read)] and learned.commands == ["git log -3 --stat"]
    )
    # the hook read the transcript's new lines once; the next prompt finds them read (no open at all)
    row = live.daemon.transcripts.pipeline.row(s.path)
    assert row is not None and live.daemon.transcripts.pipeline.unchanged(s.path, row)


def test_recall_right_after_a_bulk_save_answers_from_it(live: LiveDaemon, project: Path) -> None:
    """260 saves through the API, then the next prompt: answered from them, never 'skipped', and
    each memory ranked with its vector when the model is loaded (as it will be minutes later)."""
    live.daemon.recall.indexes.encoder.load()  # what the daemon's start does in the background
    names = []
    for i in range(260):
        names.append(
            save_memory(live, project, f"Rule {i} about module{i}", f"module{i} keeps its cache in redis shard {i}")
        )
    got = recall_api(live, project, "where does module137 keep its cache")
    assert got["method"] != "skipped" and "indexing" not in got["reason"]
    assert [m["filename"] for m in got["memories"]][:1] == [names[137]]
    store = live.daemon.stores.for_cwd(str(project))
    item = live.daemon.recall.indexes.refresh(store)
    assert len(item.index) == 260
    if live.daemon.recall.indexes.encoder.ready:
        assert len(item.dense) == 260 and live.daemon.recall.indexes.dense_pending() == 0


def test_a_fifo_named_as_a_transcript_never_wedges_a_worker(live: LiveDaemon, project: Path) -> None:
    root = live.daemon.settings.transcript_roots[0]
    fifo = root / "-fifo" / "wedge.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    base = {"session_id": "wedge", "transcript_path": str(fifo), "cwd": str(project)}
    answers: list[int] = []

    def fire(event: str) -> None:
        r = live.client.post(
            "/v1/hooks/claude-code", json={**base, "hook_event_name": event, "prompt": "what about the fifo thing"}
        )
        answers.append(r.status_code)

    threads = [threading.Thread(target=fire, args=("UserPromptSubmit" if i % 5 else "Stop",)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert answers == [200] * 50
    started = time.monotonic()
    assert live.client.get("/v1/health", timeout=5).status_code == 200
    assert save_memory(live, project, "Still saving", "the daemon still saves after fifo hooks")
    assert time.monotonic() - started < 5
    assert live.daemon.transcripts.pipeline.advance(fifo).error  # refused, not read
