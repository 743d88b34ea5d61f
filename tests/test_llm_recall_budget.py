"""Recall never holds the prompt: past the time budget the local ranking is served, and the
model's answer, when it comes, is served on that session's next prompt."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, serve
from tests.conftest import recall_api as recall
from tests.conftest import save_memory as save
from tests.support.clock import POLL_SECONDS
from tests.support.messages_api import Reply, ScriptedMessagesAPI


@pytest.fixture
def live(home: Path, messages_api: ScriptedMessagesAPI) -> Iterator[LiveDaemon]:
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    settings.recall.deadline_seconds = 0.5
    with serve(Daemon(settings)) as ld:
        yield ld


def picks(*names: str) -> Reply:
    return Reply(tool_input={"selected_memories": list(names)})


def test_a_late_answer_is_served_on_the_sessions_next_prompt(
    live: LiveDaemon, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    live.daemon.recall.settings.max_memories = 1  # the local answer takes one; the model's late pick is the other
    coffee = save(live, project, "CI/CD considerations", "Deploys go through GitHub Actions then Argo")
    ci = save(live, project, "Deploy freeze", "No GitHub Actions deploys on Fridays", type_="feedback")
    slow = picks(coffee)
    slow.delay = 1.5
    messages_api.push(slow, picks(), picks())
    first = recall(live, project, "GitHub Actions deploys", session="s-late")
    assert first["method"] == "local" and "kept for the next prompt" in first["reason"]
    assert [m["filename"] for m in first["memories"]] == [ci]
    deadline = time.monotonic() + 20
    while not live.daemon.recall.model._late:  # the slow answer lands in the background
        assert time.monotonic() < deadline, "the late answer never arrived"
        time.sleep(POLL_SECONDS)
    other = recall(live, project, "something else entirely", session="s-other")
    assert other["memories"] == []  # another session does not get it
    second = recall(live, project, "and what about the tests?", session="s-late")
    assert second["method"] == "llm" and [m["filename"] for m in second["memories"]] == [coffee]
    assert "late answer" in second["reason"]
    assert (
        json.dumps(messages_api.requests[-1]["tools"][0]["input_schema"]).count("selected_memories") == 2
    )  # the schema, with its field


def test_the_manifest_stays_under_4_kb_and_keeps_the_best_ranked(
    live: LiveDaemon, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    from memoryd.base import limits

    for i in range(60):
        save(
            live,
            project,
            f"Note {i}",
            f"Filler memory number {i} about topic {i} " + "with a long and wordy description " * 10,
        )
    target = save(
        live, project, "Kubernetes rollout", "Rollouts use kubectl rollout restart on the payments cluster " + "x" * 300
    )
    messages_api.push(picks(target))
    got = recall(live, project, "how do we restart the payments kubernetes rollout?", session="s-big")
    assert got["method"] == "llm" and [m["filename"] for m in got["memories"]] == [target]
    shown = messages_api.requests[-1]["messages"][0]["content"].split("Available memories:\n", 1)[1]
    assert len(shown.encode()) <= limits.RECALL_MANIFEST_MAX_BYTES
    assert shown.splitlines()[0].startswith(f"[project] {target} ")  # the local ranker's best comes first
    assert all(
        len(line.split("): ", 1)[1]) <= limits.RECALL_MANIFEST_DESCRIPTION_MAX_CHARS for line in shown.splitlines()
    )
