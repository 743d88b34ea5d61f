"""The JSON answers built from domain objects keep their field names, in order, and their values: memories,
recall and its log, transcript search, stale flags, dream status, team memories and syncs, the status; and the
data a recall leaves outside HTTP (the live activity event, the recall log's row) is the log's answer."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from memoryd.base.activity import RECALL
from tests.conftest import LiveDaemon
from tests.support.transcripts import new_session
from tests.test_stale import repo, slive  # noqa: F401  (fixtures: a committed repo, a served daemon)

HEADER = ["filename", "name", "description", "type", "mtime"]
MEMORY = [
    "version",
    "filename",
    "name",
    "description",
    "type",
    "body",
    "mtime",
    "created",
    "modified",
    "applies_to",
    "forbid",
]
SAVED = [*MEMORY, "path", "reaches", "will_stop", "forbid_proposed"]  # the guard says what a save now holds (#50)
INVALID = ["filename", "error"]
RECALLED = ["filename", "name", "type", "description", "content", "header", "age_days"]
WHY = ["filename", "name", "score", "injected", "terms", "paths", "dense", "context", "confidence", "rule"]
WHY += ["cover", "cover_needed", "confidence_min"]  # the rule's sums, for `memoryd recall --explain` (#39)
WHY += ["held"]  # the guard's decision (deny, ask, context) when the act was held (#50)
LOG_ENTRY = [
    "id",
    "at",
    "memory_dir",
    "session_id",
    "source",
    "prompt",
    "method",
    "reason",
    "took_ms",
    "held",  # the guard's decision when the entry is a held act (#50)
    "injected",
    "left_out",
    "lexical_only",
    "vectors_missing",
]
SYNC_REPORT = [
    "pulled",
    "removed",
    "pushed",
    "merged",
    "conflicts",
    "secret_skipped",
    "entries_capped",
    "push_suppressed",
    "kept_local",
    "refused",
    "invalid",
    "commit",
    "pushed_ok",
]


def ok(r: Any, status: int = 200) -> Any:
    assert r.status_code == status, r.text
    return r.json()


def save(
    live: LiveDaemon, cwd: Path, name: str, description: str, body: str, status: int = 201, path: str = "/v1/memories"
) -> dict[str, Any]:
    return ok(
        live.client.post(
            path, json={"cwd": str(cwd), "name": name, "description": description, "type": "project", "body": body}
        ),
        status,
    )  # type: ignore[no-any-return]


def test_memory_answers(slive: LiveDaemon, repo: Path) -> None:
    c, cwd = slive.client, str(repo)
    saved = save(
        slive,
        repo,
        "Deploying to staging",
        "How staging deploys of the shop work",
        "Deploy with `scripts/deploy.sh staging`.",
    )
    assert list(saved) == SAVED and saved["created"] is True and saved["path"].endswith("/" + saved["filename"])
    again = save(
        slive,
        repo,
        "Deploying to staging",
        "How staging deploys of the shop work",
        "Deploy after the tests.",
        status=200,
    )
    assert list(again) == SAVED and again["created"] is False and again["body"] == "Deploy after the tests."
    store = slive.daemon.stores.for_cwd(cwd)
    (store.path / "user_broken.md").write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")
    listed = ok(c.get("/v1/memories", params={"cwd": cwd}))
    assert list(listed) == ["memories", "total", "offset", "next_offset", "invalid"]
    [header] = listed["memories"]
    assert list(header) == HEADER and header["filename"] == saved["filename"] and isinstance(header["mtime"], float)
    [invalid] = listed["invalid"]
    assert list(invalid) == INVALID and invalid["filename"] == "user_broken.md"
    shown = ok(c.get(f"/v1/memories/{saved['filename']}", params={"cwd": cwd}))
    assert list(shown) == MEMORY and isinstance(shown["created"], str) and shown["version"] == again["version"]
    status = ok(c.get("/v1/status"))
    assert status["invalid_files"] == {str(store.path): [invalid]}


def test_recall_answers_and_the_recall_log_outside_http(slive: LiveDaemon, repo: Path) -> None:
    c, cwd = slive.client, str(repo)
    save(
        slive,
        repo,
        "Deploying to staging",
        "How staging deploys of the shop work",
        "Deploy with `scripts/deploy.sh staging`.",
    )
    answer = ok(
        c.post("/v1/recall", json={"cwd": cwd, "query": "how do I deploy staging for the shop", "session_id": "s1"})
    )
    assert list(answer) == ["memories", "injection", "method", "budget_used_bytes", "reason", "scores"]
    [memory] = answer["memories"]
    assert list(memory) == RECALLED  # a personal memory has no origin or author
    silent = ok(c.post("/v1/recall", json={"cwd": cwd, "query": "hi", "session_id": "s1"}))
    assert silent["memories"] == [] and silent["method"] == "skipped" and silent["reason"]
    log = ok(c.get("/v1/recall/log", params={"cwd": cwd}))
    assert list(log) == ["entries"]
    newest, oldest = log["entries"]
    assert list(oldest) == LOG_ENTRY and [list(w) for w in oldest["injected"]] == [WHY] and oldest["left_out"] == []
    assert oldest["injected"][0]["terms"] == ["deploy", "staging", "shop"] and newest["injected"] == []
    # The same entries reach the live page (activity) and the recall log's table, as data, not as objects.
    events = [e.data for e in slive.daemon.activity.recent(None) if e.kind == RECALL]  # newest first, like the log
    assert events == log["entries"] and json.loads(json.dumps(events)) == events
    rows = slive.daemon.state.query("SELECT why FROM recall_log ORDER BY id")
    assert [json.loads(r["why"]) for r in rows] == [oldest["injected"], []]


def test_team_answers_and_a_team_memory_in_recall(slive: LiveDaemon, repo: Path, tmp_path: Path) -> None:
    c, cwd = slive.client, str(repo)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    init = ok(c.post("/v1/team/init", json={"cwd": cwd, "remote": str(remote)}))
    assert list(init["sync"]) == SYNC_REPORT and init["sync_error"] == ""
    saved = save(
        slive,
        repo,
        "Team deploy rule",
        "Deploys of the shop go through the release train",
        "Every deploy of staging goes through the release train.",
        path="/v1/team/memories",
    )
    assert list(saved) == [*SAVED, "origin"] and saved["origin"] == "team" and saved["created"] is True
    listed = ok(c.get("/v1/team/memories", params={"cwd": cwd}))
    assert list(listed) == ["team_dir", "memories", "invalid"] and [list(m) for m in listed["memories"]] == [
        [*HEADER, "author"]
    ]
    synced = ok(c.post("/v1/team/sync", json={"cwd": cwd}))
    assert (
        list(synced) == [*SYNC_REPORT, "status"]
        and synced["pushed"] == [saved["filename"]]
        and synced["pushed_ok"] is True
    )
    assert ok(c.get("/v1/team/status", params={"cwd": cwd}))["last_report"] == {k: synced[k] for k in SYNC_REPORT}
    answer = ok(
        c.post(
            "/v1/recall",
            json={"cwd": cwd, "query": "how do I deploy staging through the release train", "session_id": "s2"},
        )
    )
    [team] = [m for m in answer["memories"] if m["filename"] == saved["filename"]]
    assert list(team) == [*RECALLED, "origin", "author"] and team["origin"] == "team" and team["author"]


def test_search_and_stale_answers(slive: LiveDaemon, repo: Path) -> None:
    c, cwd = slive.client, str(repo)
    s = new_session(slive.daemon.settings.transcript_roots[0], cwd)
    s.user("Remember: the staging database is reset nightly.")
    s.assistant("Understood, nightly reset.")
    found = ok(c.get("/v1/transcripts/search", params={"q": "nightly", "cwd": cwd}))
    assert list(found) == [
        "pattern",
        "regex",
        "scope",
        "results",
        "truncated",
        "reason",
        "files_scanned",
        "bytes_scanned",
        "count",
    ]
    assert found["count"] == len(found["results"]) == 2 and found["scope"] == "project"
    assert [list(hit) for hit in found["results"]] == [
        ["session_id", "file", "line", "timestamp", "role", "snippet"]
    ] * 2
    save(
        slive,
        repo,
        "Seeding fixtures",
        "How to load demo data into the shop",
        "Seed demo data with `scripts/seed_fixtures.sh` after migrating.",
    )
    stale = ok(c.get("/v1/stale", params={"cwd": cwd}))
    assert list(stale) == ["checked", "project_root", "memories"]
    [memory] = stale["memories"]
    assert list(memory) == ["filename", "name", "type", "reasons", "names"]
    assert (
        memory["names"] == [{"kind": "path", "name": "scripts/seed_fixtures.sh"}]
        and "git ls-files" in memory["reasons"][0]
    )


def test_dream_status_answers_while_a_run_waits(slive: LiveDaemon, repo: Path) -> None:
    c, cwd = slive.client, str(repo)
    status = ok(c.get("/v1/dream/status", params={"cwd": cwd}))
    assert (
        list(status) == ["memory_dir", "enabled", "gates", "last_run", "running", "next_check"]
        and status["running"] is None
    )
    assert [g["name"] for g in status["gates"]] == ["time", "scan_throttle", "sessions", "lock"]
    assert all(list(g) == ["name", "passes", "value", "threshold", "detail"] for g in status["gates"])
    save(slive, repo, "Use pnpm", "Always use pnpm for installs", "a")
    reached, release = threading.Event(), threading.Event()
    slive.daemon.dream.worker.phase_started = lambda task: (
        (reached.set(), release.wait(10)) if task.phase == "orient" else None
    )
    run_id = ok(c.post("/v1/dream/run", json={"cwd": cwd}), 202)["run_id"]
    try:
        assert reached.wait(10)
        running = ok(c.get("/v1/dream/status", params={"cwd": cwd}))["running"]
        assert running == {"run_id": run_id, "phase": "orient", "files_touched": []}
        assert ok(c.get("/v1/status"))["dream"]["running"] == [running]
    finally:
        release.set()
        slive.daemon.dream.wait(10)
