"""Silence when nothing fits (issue 17): common words never carry a match, and a prompt about
something the store does not hold gets no memory, over real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.base.text import query_terms
from memoryd.recall.ranker import LexicalIndex, analyse
from tests.conftest import LiveDaemon
from tests.conftest import recall_apart as recall
from tests.conftest import save_memory as save


@pytest.fixture
def live(module_live: LiveDaemon) -> LiveDaemon:
    """Each test keeps to its own project and its own sessions (`recall` is recall_apart): one daemon for the module."""
    return module_live


def _db_memories(live: LiveDaemon, project: Path) -> list[str]:
    return [
        save(
            live,
            project,
            "Use a real database in tests",
            "Never mock the database: integration tests always use a real Postgres",
            "We got burned when mocked tests passed and the migration failed in prod.",
        ),
        save(live, project, "Test database port", "The test Postgres listens on port 5433; use make db to start it"),
    ]


def test_pnpm_prompt_gets_no_database_memory(live: LiveDaemon, project: Path) -> None:
    _db_memories(live, project)
    data = recall(live, project, "remember that we always use pnpm, never npm")
    assert data["method"] == "local"
    assert data["memories"] == [] and data["injection"] == ""
    assert data["budget_used_bytes"] == 0


def test_common_words_alone_never_match(live: LiveDaemon, project: Path) -> None:
    _db_memories(live, project)
    for prompt in ("please always use it", "never do that again please", "we need to make it good"):
        assert recall(live, project, prompt)["memories"] == [], prompt


def test_a_relevant_prompt_still_gets_its_memory(live: LiveDaemon, project: Path) -> None:
    real_db, port = _db_memories(live, project)
    got = [m["filename"] for m in recall(live, project, "should the integration tests mock postgres?")["memories"]]
    assert got[0] == real_db
    got = [
        m["filename"] for m in recall(live, project, "which port does the test database use", session="s2")["memories"]
    ]
    assert got[0] == port


def test_off_topic_prompt_with_one_shared_word_is_silent() -> None:
    ix = LexicalIndex()
    ix.put(analyse("a.md", "Deploy with helm", "Production deploys go through the helm chart in infra/", ""))
    ix.put(analyse("b.md", "Release checklist", "Tag, write the changelog, publish the wheel", ""))
    # "chart" is shared, but the prompt is about a charting library the store knows nothing of
    assert ix.rank("render the sales chart with matplotlib colormaps and seaborn themes") == []
    assert [fn for fn, _ in ix.rank("how do we deploy the helm chart")][0] == "a.md"
    assert ix.rank(
        "render the sales chart with matplotlib colormaps and seaborn themes", gate=False
    )  # ranked, only gated


def test_long_prompt_is_not_silenced_by_its_length() -> None:
    ix = LexicalIndex()
    ix.put(
        analyse(
            "a.md",
            "Flaky websocket reconnect test",
            "The websocket reconnect test flakes under pytest-xdist; run it serially",
            "",
        )
    )
    for i in range(20):
        ix.put(analyse(f"n{i}.md", f"Note {i}", f"unrelated topic number {i} about gardening", ""))
    prompt = (
        "the websocket reconnect test flakes again in CI, here is the traceback from the runner with the asyncio loop "
        "closing early, the fixture teardown racing the server shutdown, and a timeout in the handshake after "
        "the proxy dropped the upgrade header; also the coverage job and the lint job both went red on the branch"
    )
    assert [fn for fn, _ in ix.rank(prompt)][0] == "a.md"


def test_query_terms_drop_common_words() -> None:
    assert query_terms("Please always use pnpm, never npm") == ["pnpm", "npm"]
