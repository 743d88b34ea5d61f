"""POST /v1/recall offline: gates, limits at their edges, the session ledger, the injection."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.base.clock import ManualClock
from memoryd.base.files import atomic_write
from memoryd.recall.inject import TRUNCATION_NOTE, truncate_content
from memoryd.service.daemon import Daemon
from memoryd.store.frontmatter import render_frontmatter
from tests.conftest import LiveDaemon, make_settings, recall_apart, serve_isolated
from tests.conftest import recall_api as recall
from tests.conftest import save_memory as save
from tests.support.clock import POLL_SECONDS


def test_recall_answer_has_spec_shape_and_marker(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    fn = save(
        live,
        project,
        "Postgres test database",
        "Integration tests run against a real Postgres on port 5433",
        "Start it with make db.",
    )
    save(live, project, "Release checklist", "Steps to cut a release: tag, changelog, publish")
    data = recall_apart(live, project, "how do the integration tests reach postgres?")
    assert data["method"] == "local"
    assert [m["filename"] for m in data["memories"]][0] == fn
    m = data["memories"][0]
    assert set(m) == {"filename", "name", "type", "description", "content", "header", "age_days"}
    assert m["content"] == "Start it with make db." and m["age_days"] == 0
    assert m["header"].startswith("Memory (saved today): ") and m["header"].endswith(f"{fn}:")
    inj = data["injection"]
    assert inj.startswith("<system-reminder>\n" + limits.INJECTED_MARKER + "\n")
    assert inj.count(limits.INJECTED_MARKER) == 1
    assert inj.count("<system-reminder>") == len(data["memories"]) == inj.count("</system-reminder>")
    assert data["budget_used_bytes"] == sum(len(x["content"].encode()) for x in data["memories"])


def test_single_word_query_is_skipped(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    save(live, project, "Postgres test database", "Integration tests use Postgres")
    assert recall_apart(live, project, "  postgres  ")["method"] == "skipped"
    assert recall_apart(live, project, "postgres database")["method"] == "local"


def test_no_memory_files_is_skipped(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    data = recall_apart(live, project, "anything about the tests?")
    assert data["method"] == "skipped" and data["memories"] == [] and data["injection"] == ""


def test_five_file_cap_and_already_surfaced_filtering(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    names = [save(live, project, f"Deploy note {i}", f"deploy pipeline detail number {i}") for i in range(7)]
    first = recall_apart(live, project, "deploy pipeline detail")
    assert len(first["memories"]) == limits.RECALL_MAX_MEMORIES
    second = recall_apart(live, project, "deploy pipeline detail")
    got = [m["filename"] for m in first["memories"]] + [m["filename"] for m in second["memories"]]
    assert len(second["memories"]) == 2 and sorted(got) == sorted(names)  # nothing twice
    third = recall_apart(live, project, "deploy pipeline detail")
    assert third["memories"] == [] and third["injection"] == ""
    # another session starts from zero
    assert len(recall_apart(live, project, "deploy pipeline detail", session="s2")["memories"]) == 5


def test_truncation_at_200_lines_and_4096_bytes() -> None:
    exact_lines = "\n".join(["x"] * limits.RECALL_FILE_MAX_LINES)
    assert truncate_content(exact_lines) == exact_lines
    assert truncate_content(exact_lines + "\ny") == exact_lines + TRUNCATION_NOTE
    exact_bytes = "a" * limits.RECALL_FILE_MAX_BYTES
    assert truncate_content(exact_bytes) == exact_bytes
    assert truncate_content(exact_bytes + "b") == exact_bytes + TRUNCATION_NOTE
    # a multi-byte character straddling the cut is dropped, never split
    cut = truncate_content("a" * (limits.RECALL_FILE_MAX_BYTES - 1) + "é")
    assert cut == "a" * (limits.RECALL_FILE_MAX_BYTES - 1) + TRUNCATION_NOTE


def test_truncated_content_over_http(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    body = "\n".join(f"l{i}" for i in range(300))  # 300 short lines: the line cap bites first
    save(live, project, "Runbook for outages", "Outage runbook steps", body)
    m = recall_apart(live, project, "outage runbook steps")["memories"][0]
    assert m["content"].endswith(TRUNCATION_NOTE)
    kept = m["content"][: -len(TRUNCATION_NOTE)]
    assert len(kept.split("\n")) == limits.RECALL_FILE_MAX_LINES and len(kept.encode()) <= limits.RECALL_FILE_MAX_BYTES


def test_session_budget_60kb_edge(live: LiveDaemon, project: Path) -> None:
    ledger = live.daemon.recall.ledger
    save(live, project, "Cache invalidation rule", "Invalidate the cache after every deploy")
    memdir = str(live.daemon.stores.for_cwd(str(project)).path)
    ledger.record("full", memdir, [], limits.RECALL_SESSION_BUDGET_BYTES)
    data = recall(live, project, "cache invalidation rule", session="full")
    assert data["method"] == "skipped" and data["budget_used_bytes"] == limits.RECALL_SESSION_BUDGET_BYTES
    ledger.record("almost", memdir, [], limits.RECALL_SESSION_BUDGET_BYTES - 1)
    data = recall(live, project, "cache invalidation rule", session="almost")
    assert data["method"] == "local" and len(data["memories"]) == 1
    assert data["budget_used_bytes"] > limits.RECALL_SESSION_BUDGET_BYTES - 1


def test_budget_fills_through_real_recalls(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    body = "z" * 4000
    for i in range(20):
        save(live, project, f"Big note {i}", f"large notes about widgets {i}", body)
    used, rounds = 0, 0
    while True:
        data = recall_apart(live, project, "large notes about widgets", session="grow")
        if data["method"] == "skipped":
            break
        used, rounds = data["budget_used_bytes"], rounds + 1
    assert (
        used >= limits.RECALL_SESSION_BUDGET_BYTES and rounds == 4
    )  # 3 rounds × 5 × 4,000 B = 60,000 < 61,440: a 4th round runs, then the gate shuts


def _age(live: LiveDaemon, project: Path, filename: str, seconds: float) -> None:
    path = live.daemon.stores.for_cwd(str(project)).path / filename
    t = time.time() - seconds
    os.utime(path, (t, t))


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 4, 12, 0, tzinfo=UTC))


@pytest.fixture(scope="module")
def clocked(tmp_path_factory: pytest.TempPathFactory, clock: ManualClock) -> Iterator[LiveDaemon]:
    """A live daemon on a test clock: ages follow the clock, not the machine's time. One for the module: each case
    saves into its own project and measures the age from its own save, however far earlier cases moved the clock."""
    with serve_isolated(tmp_path_factory, clock) as live:
        yield live


@pytest.mark.parametrize(
    ("age_seconds", "days", "caveat"),
    [
        (0, 0, False),
        (86_400 - 60, 0, False),
        (86_400 + 60, 1, False),
        (2 * 86_400 - 60, 1, False),
        (2 * 86_400 + 60, 2, True),
        (40 * 86_400, 40, True),
    ],
)
def test_freshness_boundary(
    clocked: LiveDaemon, clock: ManualClock, project: Path, age_seconds: float, days: int, caveat: bool
) -> None:
    live = clocked
    fn = save(live, project, "Flaky login test", "The login e2e test is flaky on CI")
    saved_at = clock.time()
    path = live.daemon.stores.for_cwd(str(project)).path / fn
    os.utime(path, (saved_at, saved_at))  # saved "now" on the daemon's clock (months before the machine's)
    clock.advance(age_seconds)  # only the daemon's clock moves: the age is the clock's, not the machine's
    m = recall(live, project, "flaky login test", session=f"age-{age_seconds}")["memories"][0]
    assert m["age_days"] == days
    if caveat:
        assert m["header"].startswith(
            f"This memory is {days} days old. Memories are point-in-time observations, not live state"
        )
        assert "Verify against current code before asserting as fact." in m["header"]
        assert m["header"].endswith(f"\n\nMemory: {live.daemon.stores.for_cwd(str(project)).path / fn}:")
    else:
        assert "days old" not in m["header"]
        assert m["header"].startswith("Memory (saved today)" if days == 0 else "Memory (saved yesterday)")


def test_ranks_every_memory_not_only_the_200_newest(live: LiveDaemon, project: Path) -> None:
    target = save(live, project, "Quokka deployment secret handshake", "The quokka service needs a handshake header")
    _age(live, project, target, 30 * 86_400)  # the oldest of all
    store = live.daemon.stores.for_cwd(str(project))
    for i in range(limits.SCAN_MAX_FILES + 5):  # written as by hand: 205 API saves would rebuild MEMORY.md 205 times
        meta = {"name": f"Filler {i}", "description": f"unrelated filler fact number {i}", "type": "project"}
        atomic_write(store.path / f"project_filler-{i}.md", render_frontmatter(meta, "filler"))
    assert target not in {h.filename for h in store.scan_memory_headers()}
    data = recall(live, project, "quokka handshake header")
    assert data["memories"][0]["filename"] == target


def test_hand_edits_and_deletes_reach_the_index(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    fn = save(live, project, "Build tool", "We build with make")
    assert recall_apart(live, project, "which build tool?", session="a")["memories"][0]["filename"] == fn
    path = live.daemon.stores.for_cwd(str(project)).path / fn
    path.write_text(path.read_text().replace("We build with make", "We build with bazel now"))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert recall_apart(live, project, "bazel builds please", session="b")["memories"][0]["filename"] == fn
    live.client.delete(f"/v1/memories/{fn}", params={"cwd": str(project)})
    save(live, project, "Other", "unrelated thing entirely")
    assert recall_apart(live, project, "bazel builds please", session="c")["memories"] == []


def test_bad_requests_are_4xx(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and, through recall_apart, its own sessions
    r = live.client.post("/v1/recall", json={"cwd": str(project), "query": "two words"})
    assert r.status_code == 422
    r = live.client.post("/v1/recall", json={"cwd": str(project), "query": "two words", "session_id": "  "})
    assert r.status_code == 400 and "session_id" in r.json()["error"]["message"]


def test_surfaced_set_survives_restart_and_expires(home: Path, project: Path) -> None:
    settings = make_settings(home)
    clock = ManualClock()
    d1 = Daemon(settings, clock=clock)
    store = d1.stores.for_cwd(str(project))
    fn = store.save(
        name="Port of the API", description="The API listens on port 8080", type="reference", body="8080"
    ).memory.filename
    assert [m.filename for m in d1.recall.recall(str(project), "api port number", "sess").memories] == [fn]
    d1.state.close()
    d2 = Daemon(settings, clock=clock)  # restart: same state.db
    again = d2.recall.recall(str(project), "api port number", "sess")
    assert again.memories == [] and again.budget_used_bytes == 4
    clock.advance(limits.RECALL_SESSION_TTL_HOURS * 3600 - 60)  # still within the TTL
    assert d2.recall.recall(str(project), "api port number", "sess").memories == []
    clock.advance(limits.RECALL_SESSION_TTL_HOURS * 3600 + 60)  # idle past the TTL: a new session
    fresh = d2.recall.recall(str(project), "api port number", "sess")
    assert [m.filename for m in fresh.memories] == [fn]
    d2.state.close()


def test_recall_metrics_and_status(live: LiveDaemon, project: Path) -> None:
    save(live, project, "Lint rule", "Run ruff before commits")
    recall(live, project, "ruff before commits")
    status = live.client.get("/v1/status").json()
    assert status["recall"]["indexed_memories"] == 1 and status["recall"]["sessions"] == 1
    assert 'memoryd_recalls_total{method="local"} 1.0' in live.client.get("/metrics").text


def test_max_chars_leaves_out_what_does_not_fit_and_does_not_mark_it(live: LiveDaemon, project: Path) -> None:
    big = save(live, project, "Widget spec big", "widget spec details", "w" * 4000)
    small = save(live, project, "Widget spec small", "widget spec summary", "short")
    recall_ = live.daemon.recall.recall
    first = recall_(str(project), "widget spec", "cap", max_chars=1000)
    assert [m.filename for m in first.memories] == [small] and len(first.injection) <= 1000
    second = recall_(str(project), "widget spec", "cap")  # the big one was not marked surfaced
    assert [m.filename for m in second.memories] == [big]
    assert second.budget_used_bytes == len("short") + 4000


def test_a_watched_store_trusts_the_watcher_between_sweeps(live: LiveDaemon, project: Path) -> None:
    """Real watchdog events invalidate the index, so repeated requests skip the directory sweep (a stat of every
    file, ~15 % of a recall of 200 memories whose vector is cached), and a hand edit still reaches recall."""
    indexes = live.daemon.recall.indexes
    fn = save(live, project, "Deploy target", "We deploy the API to fly.io")
    save(live, project, "Test runner", "Tests run with pytest -q")
    store = live.daemon.stores.for_cwd(str(project))
    assert live.daemon.watcher.is_watching(store.path)
    recall(live, project, "where do we deploy the api", session="a")
    before = indexes.sweeps
    for i in range(5):
        recall(live, project, f"pytest runner question {i}", session=f"b{i}")
    assert indexes.sweeps - before <= 1  # not one sweep per request
    path = store.path / fn
    path.write_text(path.read_text().replace("fly.io", "render.com zeppelin"))  # a hand edit
    deadline = time.monotonic() + 10
    while indexes.refresh_needed(store) is False:  # only the watcher's event can drop the index here
        assert time.monotonic() < deadline, "no watcher event for the hand edit"
        time.sleep(0.02)
    while not recall(live, project, "zeppelin render deploy", session=f"c{time.monotonic()}")["memories"]:
        assert time.monotonic() < deadline, "the watcher's event never reached the recall index"
        time.sleep(POLL_SECONDS)
