"""The LLM side-query against the scripted Messages API: good answers, and every failure
falling back to the local ranker (never an error to the agent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.recall.select import SELECT_MEMORIES_PROMPT, manifest
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, serve
from tests.conftest import recall_api as recall
from tests.conftest import save_memory as save
from tests.support.messages_api import Reply, ScriptedMessagesAPI


@pytest.fixture
def llm_live(home: Path, messages_api: ScriptedMessagesAPI) -> Iterator[LiveDaemon]:
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    settings.recall.deadline_seconds = 1.0
    daemon = Daemon(settings)
    assert daemon.llm.enabled
    with serve(daemon) as ld:
        yield ld


@pytest.fixture
def two(llm_live: LiveDaemon, project: Path) -> tuple[str, str]:
    a = save(llm_live, project, "CI/CD considerations", "Deploys go through GitHub Actions then Argo")
    b = save(llm_live, project, "Coffee order", "The user likes flat whites", type_="user")
    return a, b


def selection(*names: str) -> str:
    return json.dumps({"selected_memories": list(names)})


def test_good_selection_uses_the_llm_and_seeds_prompt(
    llm_live: LiveDaemon, project: Path, two: tuple[str, str], messages_api: ScriptedMessagesAPI
) -> None:
    a, b = two
    messages_api.push("Here you go:\n```json\n" + selection(a) + "\n```")
    data = recall(llm_live, project, "what is the deployment process?")
    assert data["method"] == "llm" and [m["filename"] for m in data["memories"]] == [a]
    body = messages_api.requests[-1]
    assert body["system"] == SELECT_MEMORIES_PROMPT and body["max_tokens"] == limits.RECALL_SIDE_QUERY_MAX_TOKENS
    user = body["messages"][0]["content"]
    assert user.startswith("Query: what is the deployment process?\n\nAvailable memories:\n")
    assert f"[project] {a} (" in user and b not in user  # only the local ranker's candidates are offered (issue 27)
    assert "): Deploys go through GitHub Actions then Argo" in user
    usage = llm_live.client.get("/v1/status").json()["llm_usage"]["by_purpose"]["recall"]
    assert usage["calls"] == 1 and usage["input_tokens"] == 10
    assert (
        'memoryd_llm_tokens_total{backend="anthropic",direction="input",purpose="recall"} 10.0'
        in llm_live.client.get("/metrics").text
    )


def test_already_surfaced_memories_are_not_offered_again(
    llm_live: LiveDaemon, project: Path, two: tuple[str, str], messages_api: ScriptedMessagesAPI
) -> None:
    a, b = two
    messages_api.push(selection(a), selection(a, b))
    assert [m["filename"] for m in recall(llm_live, project, "deployment process please")["memories"]] == [a]
    data = recall(llm_live, project, "deployment process please")
    # a is surfaced and b matches nothing: no candidate is left, so the model is not asked (issue 27)
    assert len(messages_api.requests) == 1 and data["memories"] == [] and "not asked" in data["reason"]


def test_unknown_filenames_are_dropped(
    llm_live: LiveDaemon, project: Path, two: tuple[str, str], messages_api: ScriptedMessagesAPI
) -> None:
    a, _ = two
    messages_api.push(selection("project_made-up.md", "../../etc/passwd", a, a))
    data = recall(llm_live, project, "deployment process please")
    assert data["method"] == "llm" and [m["filename"] for m in data["memories"]] == [a]


def test_empty_selection_is_respected(
    llm_live: LiveDaemon, project: Path, two: tuple[str, str], messages_api: ScriptedMessagesAPI
) -> None:
    messages_api.push(selection())
    data = recall(llm_live, project, "deployment process please")
    assert data["method"] == "llm" and data["memories"] == [] and data["injection"] == ""


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="I think the CI one is relevant."),
        Reply(text='{"selected": ["x"]}'),
        Reply(status=500),
        Reply(status=529),
        Reply(raw_body="not json at all"),
    ],
    ids=["garbage-text", "wrong-key", "http-500", "http-529", "garbage-body"],
)
def test_failures_fall_back_to_local(
    llm_live: LiveDaemon, project: Path, two: tuple[str, str], messages_api: ScriptedMessagesAPI, reply: Reply
) -> None:
    a, _ = two
    messages_api.push(reply)
    data = recall(llm_live, project, "GitHub Actions deploys")
    assert data["method"] == "local" and [m["filename"] for m in data["memories"]] == [a]
    assert "local ranking served" in data["reason"]


def test_slow_answer_past_deadline_serves_local(
    llm_live: LiveDaemon, project: Path, two: tuple[str, str], messages_api: ScriptedMessagesAPI
) -> None:
    a, _ = two
    messages_api.push(Reply(text=selection(a), delay=3.0))
    data = recall(llm_live, project, "GitHub Actions deploys")
    assert data["method"] == "local" and "deadline" in data["reason"]
    assert [m["filename"] for m in data["memories"]] == [a]


def test_daily_token_cap_falls_back(home: Path, project: Path, messages_api: ScriptedMessagesAPI) -> None:
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    settings.llm.daily_token_cap = 15
    daemon = Daemon(settings)
    store = daemon.stores.for_cwd(str(project))
    fn = store.save(
        name="Deploy flow", description="Deploys go through Argo", type="project", body="argo"
    ).memory.filename
    messages_api.push(selection(fn))
    assert daemon.recall.recall(str(project), "deploy flow argo", "s1").method == "llm"  # spends 15 tokens
    second = daemon.recall.recall(str(project), "deploy flow argo", "s2")
    assert second.method == "local" and "token_budget_exceeded" in second.reason
    assert len(messages_api.requests) == 1
    daemon.state.close()


def test_the_model_chooses_among_the_local_candidates_only(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    daemon = Daemon(settings)
    store = daemon.stores.for_cwd(str(project))
    target = store.save(
        name="Zebra migration plan", description="How the zebra table gets migrated", type="project", body="x"
    ).memory.filename
    for i in range(limits.RECALL_SIDE_QUERY_CANDIDATES):  # 51 memories in all
        store.save(name=f"Note {i}", description=f"filler fact {i}", type="project", body="y")
    messages_api.push(selection(target))
    result = daemon.recall.recall(str(project), "zebra table migration", "s1")
    assert result.method == "llm" and [m.filename for m in result.memories] == [target]
    lines = messages_api.requests[-1]["messages"][0]["content"].split("Available memories:\n", 1)[1].splitlines()
    # only what the local ranker found is offered (the fillers share no word with the prompt): the model can add
    # precision, not noise
    assert len(lines) == 1 and lines[0].startswith(f"[project] {target} (")
    messages_api.push(selection())
    daemon.recall.recall(str(project), "filler fact notes", "s2")
    lines = messages_api.requests[-1]["messages"][0]["content"].split("Available memories:\n", 1)[1].splitlines()
    assert len(lines) == limits.RECALL_SIDE_QUERY_CANDIDATES  # 50 fillers match: the best 50 are offered
    daemon.state.close()


def test_manifest_line_format(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home))
    store = daemon.stores.for_cwd(str(project))
    store.save(name="A", description="one line", type="feedback", body="b")
    (h,) = store.all_headers()
    when = datetime.fromtimestamp(h.mtime, UTC)
    assert manifest([h]) == f"[feedback] {h.filename} ({when:%Y-%m-%dT%H:%M:%SZ}): one line"
    daemon.state.close()
