"""The model's side-query off the critical path (#38 item 7): the prompt's hook answers with the local choice
while the model is still thinking; its pick reaches the same turn through the async hook (`?await=model`),
without what was already injected, and only once."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, serve
from tests.conftest import save_memory as save
from tests.support.messages_api import Reply, ScriptedMessagesAPI

MEMORIES = [
    ("CI/CD pipeline", "Deploys go through GitHub Actions then Argo; never deploy from a laptop"),
    ("Release process", "Releases are tagged from main after the deploy job is green"),
    ("Deploy freeze", "No deploys on Fridays after 14:00, the on-call rota is thin"),
    ("Staging database", "The staging database is reset every night at 02:00 UTC"),
    ("Code review", "Every change needs one approving review before merge; the process is in CONTRIBUTING.md"),
    ("Changelog", "Each user-facing change adds a line to CHANGELOG.md under Unreleased"),
]


class HeldModel:
    """A model that holds its answer until the test releases it, then picks the candidates it was offered from the
    lowest-ranked up (so its pick differs from the local choice, which takes them from the top)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked = threading.Event()
        self.offered: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.asked.set()
        self.offered = re.findall(r"\] (\S+\.md) \(", json.dumps(body["messages"]))
        assert self.release.wait(30), "the test never released the model"
        return Reply(text=json.dumps({"selected_memories": self.offered[::-1]}))


@pytest.fixture
def held(home: Path, messages_api: ScriptedMessagesAPI) -> Iterator[tuple[LiveDaemon, HeldModel]]:
    model = HeldModel()
    messages_api.handler = model
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    settings.recall.deadline_seconds = 0.5
    settings.recall.max_memories = 2  # the local choice and the model's then differ (see HeldModel)
    daemon = Daemon(settings)
    with serve(daemon) as live:
        yield live, model
    model.release.set()


def hook(live: LiveDaemon, payload: dict[str, Any], query: str = "") -> dict[str, Any]:
    r = live.client.post("/v1/hooks/claude-code" + query, json=payload, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def injected_files(answer: dict[str, Any]) -> set[str]:
    text = answer.get("hookSpecificOutput", {}).get("additionalContext", "")
    return set(re.findall(r"([\w.-]+\.md)", text))


def test_the_prompt_is_answered_while_the_model_thinks_and_its_pick_follows_in_the_turn(
    held: tuple[LiveDaemon, HeldModel], project: Path
) -> None:
    live, model = held
    files = [save(live, project, name, description) for name, description in MEMORIES]
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": str(uuid.uuid4()),
        "cwd": str(project),
        "prompt": "what is the deployment process for a release?",
    }
    first = hook(live, prompt)  # returns while the model is held: the hook never waits for it
    assert model.asked.wait(10) and not model.release.is_set()
    local = injected_files(first)

    answers: list[dict[str, Any]] = []
    waiter = threading.Thread(target=lambda: answers.append(hook(live, prompt, "?await=model")))
    waiter.start()  # the async hook, started by Claude Code beside the first one
    model.release.set()
    waiter.join(30)
    [followup] = answers
    picked = set(model.offered[::-1][:2])
    assert len(model.offered) >= 4 and picked <= set(files)
    assert injected_files(followup) == picked - local  # the model's pick, less what the prompt already got
    assert picked - local, "the test needs a candidate the local choice left out"
    assert hook(live, prompt, "?await=model") == {}  # handed over once


def test_without_a_model_the_async_hook_answers_nothing_at_once(live: LiveDaemon, project: Path) -> None:
    save(live, project, *MEMORIES[0])
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s-off", "cwd": str(project), "prompt": "deploy?"}
    assert hook(live, prompt, "?await=model") == {}
