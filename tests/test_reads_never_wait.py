"""Issue 52: reads never wait on writes. A recall or a tool-time answer ranks with what is ready while vectors are
owed and says so in the recall log; a huge memory's page renders its first part and links to the whole text; async
hooks waiting for the model leave worker threads to other sessions. Real daemons over loopback HTTP, real files."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoryd.base import limits
from memoryd.recall.dense import Backend
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, save_memory, serve
from tests.support.messages_api import ScriptedMessagesAPI
from tests.support.servers import loopback_client
from tests.support.toy_model import toy_backend

# End-to-end (a daemon whose embedding thread is held while saves stream):
# CI runs it after the fast suite, which stays under 2 minutes.
pytestmark = pytest.mark.e2e

EMBED_THREAD = "recall-embed"


def wait_for(what: str, ready: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def gated_backend(calls: list[str], gate: threading.Event) -> Backend:
    """A two-dimensional stand-in model whose passages wait for `gate`: while it is shut, the embedding thread is
    stuck in a batch and every saved memory's vector stays owed. Records the thread of each call."""

    def passages(texts: list[str]) -> Any:
        calls.append(threading.current_thread().name)
        gate.wait(timeout=60)
        return np.stack([np.array([1.0, 0.0], dtype=np.float32) for _ in texts])

    return toy_backend(passages)


@pytest.fixture
def gated(home: Path) -> Iterator[tuple[LiveDaemon, list[str], threading.Event]]:
    calls: list[str] = []
    gate = threading.Event()
    gate.set()
    daemon = Daemon(make_settings(home))
    daemon.recall.indexes.encoder.backend = gated_backend(calls, gate)  # the daemon's start runs its thread
    try:
        with serve(daemon) as live:
            yield live, calls, gate
    finally:
        gate.set()


def pending(live: LiveDaemon) -> int:
    return int(live.client.get("/v1/status").json()["recall"]["dense_pending"])


def log_of(live: LiveDaemon, project: Path) -> list[dict[str, Any]]:
    return list(live.client.get("/v1/recall/log", params={"cwd": str(project)}).json()["entries"])


def test_reads_answer_from_what_is_ready_while_vectors_are_owed_and_the_log_says_so(
    gated: tuple[LiveDaemon, list[str], threading.Event], project: Path
) -> None:
    """Before: every recall and PreToolUse first paid the vectors saves left owed (waiting for the embedding
    thread's batch in flight): 18-23 s under a stream of saves. Now neither computes a vector: the memories
    without one are found lexically, and the recall log says the answer was partial (or lexical only)."""
    live, calls, gate = gated
    save_memory(live, project, "Release train", "Releases ship on Tuesdays")
    wait_for("the first memory's vector", lambda: pending(live) == 0)
    gate.clear()  # from here the embedding thread is stuck in its next batch
    rule = live.client.post(
        "/v1/memories",
        json={
            "cwd": str(project),
            "name": "Use pnpm",
            "description": "Always use pnpm for installs, never npm",
            "type": "feedback",
            "body": "pnpm only.",
            "applies_to": {"commands": ["npm", "pnpm"]},
            "forbid": {},  # context at tool time, not the guard's refusal: this test is about what recall reads
        },
    ).json()["filename"]
    for i in range(12):
        save_memory(live, project, f"Staging note {i}", f"staging host {i} runs the nightly job")
    wait_for("the embedding thread in its batch", lambda: EMBED_THREAD in calls)
    hook = {"session_id": "s-pre", "cwd": str(project), "tool_name": "Bash", "hook_event_name": "PreToolUse"}
    answer = live.client.post("/v1/hooks/claude-code", json={**hook, "tool_input": {"command": "npm install x"}})
    assert "Use pnpm" in answer.json()["hookSpecificOutput"].get("additionalContext", ""), answer.text
    got = live.client.post(
        "/v1/recall",
        json={"cwd": str(project), "query": "should installs use pnpm or npm here", "session_id": "s-recall"},
    ).json()
    assert rule in [m["filename"] for m in got["memories"]]  # found while its vector is owed
    entries = {e["source"]: e for e in log_of(live, project)}
    assert entries["hook:PreToolUse:Bash"]["lexical_only"] is True  # tool time never uses a vector
    assert entries["rest"]["lexical_only"] is False and entries["rest"]["vectors_missing"] == 13
    assert pending(live) == 13
    assert set(calls) == {EMBED_THREAD}  # no vector was computed on a request's thread
    gate.set()
    wait_for("the owed vectors, paid in the background", lambda: pending(live) == 0)
    live.client.post(
        "/v1/recall", json={"cwd": str(project), "query": "which staging host runs the job", "session_id": "s-later"}
    )
    assert log_of(live, project)[0]["vectors_missing"] == 0
    assert set(calls) == {EMBED_THREAD}


def test_a_huge_memory_page_renders_its_first_part_and_links_to_the_whole_text(live: LiveDaemon, project: Path) -> None:
    """A 900 KB hand-written memory: the page renders the first MARKDOWN_RENDER_MAX_CHARS as Markdown, says how
    much it left out and links to the raw text, which is served whole as plain text."""
    from tests.test_ui import login, pid

    save_memory(live, project, "Deploy day", "We deploy on Tuesdays")
    folder = live.daemon.stores.for_cwd(str(project)).path
    block = "## Step {i}\n\n- run `make {i}` *first*, then [the docs](https://example.com/{i})\n\n"
    body = "".join(block.format(i=i) for i in range(900_000 // len(block)))
    text = f"---\nname: huge\ndescription: a hand-written memory of 900 KB\ntype: user\n---\n{body}"
    (folder / "user_huge.md").write_text(text)
    browser, _ = login(live)
    page = browser.get(f"/ui/p/{pid(live, project)}/m/user_huge.md")
    assert page.status_code == 200 and "<h2>Step 0</h2>" in page.text
    assert "Step 2000</h2>" not in page.text  # past the cap: not rendered
    raw = f"/ui/p/{pid(live, project)}/m/user_huge.md/raw"
    assert "more characters not shown" in page.text and f'href="{raw}"' in page.text
    whole = browser.get(raw)
    assert whole.status_code == 200 and whole.headers["content-type"].startswith("text/plain")
    assert whole.text == text
    assert loopback_client(live.url).get(raw).status_code in (401, 303)  # the raw text needs the login too


def test_async_hooks_waiting_for_the_model_leave_threads_to_other_sessions(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    """45 async hooks (`--await-model`) waiting for the model held every worker thread: another session's prompt
    hook waited 16.9 s. Now at most RECALL_MODEL_FOLLOWUP_WAITERS wait; the rest answer with what is ready."""
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    waiting = 45
    answered: list[int] = []
    with serve(Daemon(settings)) as live:
        save_memory(live, project, "Use pnpm", "Always use pnpm for installs, never npm")

        def await_model(n: int) -> None:  # a prompt whose own hook never comes: it would wait for its decision
            with loopback_client(live.url, headers=live.client.headers, timeout=30) as c:
                c.post(
                    "/v1/hooks/claude-code",
                    params={"await": "model"},
                    json={
                        "hook_event_name": "UserPromptSubmit",
                        "session_id": f"await-{n}",
                        "cwd": str(project),
                        "prompt": f"how do we install packages {n}",
                    },
                )
                answered.append(n)

        threads = [threading.Thread(target=await_model, args=(n,)) for n in range(waiting)]
        for t in threads:
            t.start()
        bound = limits.RECALL_MODEL_FOLLOWUP_WAITERS
        wait_for("the hooks past the bound answered at once", lambda: len(answered) >= waiting - bound, seconds=4)
        prompt = live.client.post(
            "/v1/hooks/claude-code",
            json={
                "hook_event_name": "UserPromptSubmit",
                "session_id": "other",
                "cwd": str(project),
                "prompt": "should I use npm or pnpm to install",
            },
        )
        assert prompt.status_code == 200 and len(answered) == waiting - bound  # answered while `bound` still wait
        for t in threads:
            t.join()


def test_what_memories_apply_to_is_derived_after_saves_without_a_request(live: LiveDaemon, project: Path) -> None:
    """A tool call after an import derived each new file's applies_to itself (0.8 s after 2,000 quick saves): now a
    background thread brings the view up to the index after saves, before any request asks."""
    for i in range(20):
        save_memory(live, project, f"Rule {i}", f"Never run `npm publish` from branch {i}")
    store = live.daemon.stores.for_cwd(str(project))
    item = live.daemon.recall.indexes._item(store)

    def current() -> bool:
        view = live.daemon.recall.applies._by_dir.get(str(store.path))
        return view is not None and view.version == item.version and len(view.applies) == 20

    wait_for("the applies view brought up to date in the background", current)
