"""Auto-Dream: gates at their edges, the PID lock (races, staleness, rollback), consolidation
offline and with an LLM, cancel, undo, and a kill -9 in the middle of a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memoryd.base import limits
from memoryd.base.clock import ManualClock
from memoryd.dream import ConsolidationLock
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, save_memory, serve
from tests.support.clock import POLL_SECONDS
from tests.support.messages_api import RETRY_NOW, Reply, ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env
from tests.support.transcripts import new_session


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def dlive(home: Path, clock: ManualClock) -> Iterator[LiveDaemon]:
    with serve(Daemon(make_settings(home), clock=clock)) as live:
        yield live


def topic_files(directory: Path) -> dict[str, Any]:
    """Topic files byte for byte, and MEMORY.md as a set of lines (it is derived; its order follows mtimes)."""
    files: dict[str, Any] = {p.name: p.read_text() for p in directory.glob("*_*.md")}
    files["MEMORY.md"] = set((directory / "MEMORY.md").read_text().splitlines())
    return files


def save(live: LiveDaemon, cwd: Path, name: str, description: str, body: str, type_: str = "feedback") -> str:
    return save_memory(live, cwd, name, description, body, type_)


def gates(live: LiveDaemon, cwd: Path) -> dict[str, dict[str, Any]]:
    return {g["name"]: g for g in live.client.get("/v1/dream/status", params={"cwd": str(cwd)}).json()["gates"]}


def wait_run(live: LiveDaemon, cwd: Path, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        run = next(
            (
                r
                for r in live.client.get("/v1/dream/runs", params={"cwd": str(cwd)}).json()["runs"]
                if r["run_id"] == run_id
            ),
            None,
        )
        if run and run["status"] != "running":
            return run
        time.sleep(POLL_SECONDS)
    raise AssertionError("run did not finish")


def test_time_gate_edge(dlive: LiveDaemon, project: Path, clock: ManualClock) -> None:
    store = dlive.daemon.stores.for_cwd(str(project))
    save(dlive, project, "A", "something", "x")
    assert gates(dlive, project)["time"]["passes"]  # never consolidated: open
    lock = ConsolidationLock(store.path)
    lock.path.write_text("")
    stamp = clock.time() - 24 * 3600 + 1
    os.utime(lock.path, (stamp, stamp))
    assert not gates(dlive, project)["time"]["passes"]  # 23 h 59 min 59 s
    clock.advance(timedelta(seconds=1))
    assert gates(dlive, project)["time"]["passes"]  # exactly 24 h


def test_scan_throttle_edge(dlive: LiveDaemon, project: Path, clock: ManualClock) -> None:
    store = dlive.daemon.stores.for_cwd(str(project))
    save(dlive, project, "A", "something", "x")
    dream = dlive.daemon.dream
    dream.gates.check(store, record_scan=True)
    clock.advance(timedelta(seconds=599))
    assert not {g.name: g for g in dream.gates.check(store)}["scan_throttle"].passes
    clock.advance(timedelta(seconds=1))
    assert {g.name: g for g in dream.gates.check(store)}["scan_throttle"].passes


def test_sessions_gate_edge_excludes_the_current_session(dlive: LiveDaemon, project: Path) -> None:
    save(dlive, project, "A", "something", "x")
    root = dlive.daemon.settings.transcript_roots[0]
    for i in range(5):
        new_session(root, str(project)).user(f"hello {i}")
    sub = new_session(root, str(project / "sub"))  # launched in a subdirectory: same project
    sub.user("hello from sub")
    g = gates(dlive, project)["sessions"]
    assert g["value"] == 5 and g["passes"]  # 6 touched, the newest excluded
    sub.path.unlink()
    g = gates(dlive, project)["sessions"]
    assert g["value"] == 4 and not g["passes"]


def test_offline_consolidation_merges_dates_and_undo(dlive: LiveDaemon, project: Path) -> None:
    a = save(
        dlive,
        project,
        "Use pnpm",
        "Always use pnpm for installs",
        "Use pnpm.\n\n**Why:** lockfile.\n**How to apply:** installs.",
    )
    b = save(
        dlive,
        project,
        "pnpm only",
        "Always use pnpm for installs",
        "Never npm.\n\n**Why:** lockfile.\n**How to apply:** installs.",
    )
    c = save(
        dlive,
        project,
        "Freeze",
        "Merge freeze",
        "The freeze starts tomorrow.\n\n**Why:** release.\n**How to apply:** no merges.",
        type_="project",
    )
    before = {f: dlive.daemon.stores.for_cwd(str(project)).read_raw(f) for f in (a, b, c)}
    run_id = dlive.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"]
    run = wait_run(dlive, project, run_id)
    assert run["status"] == "done" and run["method"] == "offline", run
    files = {m["filename"] for m in dlive.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]}
    assert len(files & {a, b}) == 1 and c in files
    survivor = (files & {a, b}).pop()
    body = dlive.client.get(f"/v1/memories/{survivor}", params={"cwd": str(project)}).json()["body"]
    assert "Use pnpm." in body and "Never npm." in body
    freeze = dlive.client.get(f"/v1/memories/{c}", params={"cwd": str(project)}).json()["body"]
    assert "tomorrow" not in freeze and "2026-03-05" in freeze
    index = dlive.client.get("/v1/index", params={"cwd": str(project)}).json()["content"]
    assert index.count("\n") == 2
    status = dlive.client.get("/v1/dream/status", params={"cwd": str(project)}).json()
    assert status["last_run"]["run_id"] == run_id and not status["gates"][0]["passes"]  # just consolidated
    undo = dlive.client.post(f"/v1/dream/runs/{run_id}/undo").json()
    assert set(undo["restored"]) == {a, b, c}
    store = dlive.daemon.stores.for_cwd(str(project))
    assert {f: store.read_raw(f) for f in (a, b, c)} == before
    assert dlive.client.post(f"/v1/dream/runs/{run_id}/undo").status_code == 409
    assert dlive.client.post("/v1/dream/runs/dream_nope/undo").status_code == 404


def test_failure_restores_files_and_rolls_the_lock_back(dlive: LiveDaemon, project: Path) -> None:
    save(dlive, project, "Use pnpm", "Always use pnpm for installs", "a")
    save(dlive, project, "pnpm only", "Always use pnpm for installs", "b")
    store = dlive.daemon.stores.for_cwd(str(project))
    lock = ConsolidationLock(store.path)
    lock.path.write_text("")
    os.utime(lock.path, (1_000_000, 1_000_000))
    snapshot = topic_files(store.path)

    def boom(task: Any) -> None:
        if task.files_touched:
            raise RuntimeError("disk on fire")

    dlive.daemon.dream.worker.between_actions = boom
    run = wait_run(dlive, project, dlive.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"])
    assert run["status"] == "failed" and "disk on fire" in run["error"]
    assert lock.last_consolidated_at() == 1_000_000 and lock.holder() is None
    assert topic_files(store.path) == snapshot


@pytest.mark.parametrize("phase", ["orient", "gather signal", "consolidate", "prune & index"])
def test_cancel_in_each_phase_rolls_everything_back(dlive: LiveDaemon, project: Path, phase: str) -> None:
    save(dlive, project, "Use pnpm", "Always use pnpm for installs", "a")
    save(dlive, project, "pnpm only", "Always use pnpm for installs", "b")
    store = dlive.daemon.stores.for_cwd(str(project))
    snapshot = topic_files(store.path)
    index_before = (store.path / "MEMORY.md").read_text()
    reached, release = threading.Event(), threading.Event()

    def pause(task: Any) -> None:
        if task.phase == phase:
            reached.set()
            release.wait(10)

    dlive.daemon.dream.worker.phase_started = pause
    run_id = dlive.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"]
    assert reached.wait(10)
    running = dlive.client.get("/v1/dream/status", params={"cwd": str(project)}).json()["running"]
    assert running["run_id"] == run_id and running["phase"] == phase
    assert dlive.client.post("/v1/dream/run", json={"cwd": str(project)}).status_code == 409
    cancel = threading.Thread(target=lambda: dlive.client.post("/v1/dream/cancel", json={"cwd": str(project)}))
    cancel.start()
    deadline = time.monotonic() + 10
    while not dlive.daemon.dream.worker.task(store.path).cancel.is_set():  # the cancel reached the run
        assert time.monotonic() < deadline
        time.sleep(0.01)
    release.set()
    cancel.join(10)
    run = wait_run(dlive, project, run_id)
    assert run["status"] == "cancelled", run
    assert not (store.path / ".consolidate-lock").exists()  # no prior consolidation: the lock file is gone
    # The same files with the same texts, and the same index lines (restored files are newer, so their order may
    # change).
    assert topic_files(store.path) == snapshot and sorted(
        (store.path / "MEMORY.md").read_text().splitlines()
    ) == sorted(index_before.splitlines())


def test_an_undo_refused_part_way_changes_nothing(dlive: LiveDaemon, project: Path) -> None:
    for i in range(3):
        save(dlive, project, f"pnpm rule {i}", "Always use pnpm for installs", f"body {i}")
    store = dlive.daemon.stores.for_cwd(str(project))
    before = topic_files(store.path)
    run_id = dlive.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"]
    run = wait_run(dlive, project, run_id)
    assert run["status"] == "done" and run["changes"], run
    after = topic_files(store.path)
    # A prior text that would now be refused (a secret planted in the backup): the undo changes nothing.
    manifest = dlive.daemon.dream.records.backups / run_id / "manifest.json"
    data = json.loads(manifest.read_text())
    victim = sorted(name for name, text in data.items() if text)[-1]
    data[victim] = data[victim].replace("body", "password = hunter2hunter2 body")
    manifest.write_text(json.dumps(data))
    r = dlive.client.post(f"/v1/dream/runs/{run_id}/undo")
    assert r.status_code == 409 and "nothing was changed" in r.text, r.text
    assert topic_files(store.path) == after
    assert dlive.client.get("/v1/dream/runs", params={"cwd": str(project)}).json()["runs"][0]["undone_at"] is None
    assert before != after


def test_a_run_left_running_by_a_crash_is_rolled_back_at_start(home: Path, project: Path, clock: ManualClock) -> None:
    settings = make_settings(home)
    with serve(Daemon(settings, clock=clock)) as live:
        for i in range(3):
            save(live, project, f"pnpm rule {i}", "Always use pnpm for installs", f"body {i}")
        store = live.daemon.stores.for_cwd(str(project))
        before = topic_files(store.path)
        lock = ConsolidationLock(store.path)
        lock.release_success(clock.time() - 3 * 86400)
        prior_mtime = lock.last_consolidated_at()
        gate = threading.Event()
        live.daemon.dream.worker.between_actions = lambda task: gate.wait(0.2) if task.files_touched else None
        run_id = live.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"]
        deadline = time.monotonic() + 10
        while not (task := live.daemon.dream.worker.task(store.path)) or not task.files_touched:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        # A crash: the state says 'running', files are half changed, the lock holds a dead PID.
        live.daemon.state.execute("UPDATE dream_runs SET status = 'running' WHERE run_id = ?", (run_id,))
        snapshot_mid = topic_files(store.path)
        gate.set()
        live.daemon.dream.wait()
        live.daemon.state.execute(
            "UPDATE dream_runs SET status = 'running', finished_at = NULL WHERE run_id = ?", (run_id,)
        )
        lock.path.write_text("999999")  # a PID that is not running
    assert snapshot_mid != before
    with serve(Daemon(settings, clock=clock)) as live:
        run = live.client.get("/v1/dream/runs", params={"cwd": str(project)}).json()["runs"][0]
        assert run["run_id"] == run_id and run["status"] == "failed" and "rolled back" in run["error"], run
        assert topic_files(store.path) == before
        assert abs(lock.last_consolidated_at() - prior_mtime) < 1 and lock.holder() is None
        assert live.client.post(f"/v1/dream/runs/{run_id}/undo").status_code in (200, 409)


def test_lock_held_by_live_process_gives_409_then_stale_or_dead_is_reclaimed(
    dlive: LiveDaemon, project: Path, clock: ManualClock
) -> None:
    save(dlive, project, "A", "something", "x")
    store = dlive.daemon.stores.for_cwd(str(project))
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = ConsolidationLock(store.path)
        lock.path.write_text(str(holder.pid))
        now = clock.time()
        os.utime(lock.path, (now - 10, now - 10))
        r = dlive.client.post("/v1/dream/run", json={"cwd": str(project)})
        assert r.status_code == 409 and r.json()["error"]["code"] == "lock_held"
        assert not gates(dlive, project)["lock"]["passes"]
        os.utime(lock.path, (now - 3600, now - 3600))  # stale by age, holder still alive
        assert gates(dlive, project)["lock"]["passes"]
        os.utime(lock.path, (now - 10, now - 10))
    finally:
        holder.kill()
        holder.wait()
    assert gates(dlive, project)["lock"]["passes"]  # dead PID
    run = wait_run(dlive, project, dlive.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"])
    assert run["status"] == "done"


RACER = """
import sys, time
from pathlib import Path
from memoryd.dream import ConsolidationLock
directory, signals = Path(sys.argv[1]), Path(sys.argv[2])
(signals / f"ready-{sys.argv[3]}").touch()
while not (signals / "go").exists():
    pass
print("won" if ConsolidationLock(directory).try_acquire(time.time()) is not None else "lost", flush=True)
while not (signals / "done").exists():  # the winner holds the lock (stays alive) until both have tried
    time.sleep(0.01)
"""


@pytest.mark.e2e
def test_two_processes_racing_for_the_lock_one_wins(tmp_path: Path) -> None:
    for round_ in range(5):
        directory, signals = tmp_path / f"m{round_}", tmp_path / f"s{round_}"
        directory.mkdir()
        signals.mkdir()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", RACER, str(directory), str(signals), str(i)], stdout=subprocess.PIPE, text=True
            )
            for i in range(2)
        ]
        deadline = time.monotonic() + 30
        while len(list(signals.glob("ready-*"))) < 2:  # both imported and spinning: the start is a real race
            assert time.monotonic() < deadline, "the racers never started"
            time.sleep(0.01)
        (signals / "go").touch()
        outs = [p.stdout.readline().strip() for p in procs if p.stdout]
        (signals / "done").touch()
        for p in procs:
            p.wait(timeout=30)
        assert sorted(outs) == ["lost", "won"], outs


def test_llm_consolidation_applies_validated_actions(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    with serve(Daemon(make_settings(home, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=messages_api.url))) as live:
        old = save(live, project, "DB", "The API uses Postgres 15", "pg15", type_="project")
        dup = save(live, project, "Database", "The API database is Postgres", "pg", type_="project")
        plan = {
            "actions": [
                {
                    "op": "write",
                    "filename": old,
                    "name": "DB",
                    "type": "project",
                    "description": "The API uses Postgres 17 (since 2026-03-01)",
                    "body": "pg17\n\n**Why:** upgrade.\n**How to apply:** PG17.",
                },
                {"op": "delete", "filename": dup, "why": "duplicate"},
                {"op": "delete", "filename": "../../etc/passwd"},
                {
                    "op": "write",
                    "name": "Key",
                    "type": "reference",
                    "description": "the key",
                    "body": "token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
                },
            ],
            "summary": "merged database facts",
        }
        messages_api.push(Reply(text=json.dumps(plan)))
        run = wait_run(live, project, live.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"])
        assert run["status"] == "done" and run["method"] == "llm"
        names = [
            m["filename"] for m in live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
        ]
        assert names == [old]
        assert any("invalid filename" in n for n in run["notes"]) and any("secret_detected" in n for n in run["notes"])
        assert (
            "Postgres 17" in live.client.get(f"/v1/memories/{old}", params={"cwd": str(project)}).json()["description"]
        )
        assert "dream" in live.client.get("/v1/status").json()["llm_usage"]["by_purpose"]
        messages_api.push(Reply(status=500, headers=RETRY_NOW))  # LLM down: the deterministic pass runs instead
        run2 = wait_run(live, project, live.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"])
        assert run2["status"] == "done" and run2["method"] == "offline" and "LLM unavailable" in run2["notes"][0]


@pytest.mark.e2e
def test_kill_9_mid_consolidation_leaves_store_consistent_and_lock_reclaimable(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    env = daemon_env(home, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=messages_api.url)
    messages_api.push(Reply(text='{"actions": []}', delay=30))
    first = DaemonProcess(home=home, env=env).start()
    with first.client() as c:
        c.post(
            "/v1/memories",
            json={"cwd": str(project), "name": "A", "description": "alpha fact", "type": "user", "body": "a"},
        )
        c.post(
            "/v1/memories",
            json={"cwd": str(project), "name": "B", "description": "beta fact", "type": "user", "body": "b"},
        )
        memory_dir = Path(c.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
        assert c.post("/v1/dream/run", json={"cwd": str(project)}).status_code == 202
        deadline = time.monotonic() + 10
        while not messages_api.requests:
            assert time.monotonic() < deadline
            time.sleep(POLL_SECONDS)
    first.kill()
    lock = ConsolidationLock(memory_dir)
    assert lock.holder() == first.proc.pid and lock.held_by_other(time.time()) is None  # dead PID: reclaimable
    assert not list(memory_dir.rglob(".tmp-*"))
    index = (memory_dir / "MEMORY.md").read_text()
    assert sorted(p.name for p in memory_dir.glob("*.md") if p.name != "MEMORY.md") == sorted(
        row.split("](")[1].split(")")[0] for row in index.splitlines()
    )
    messages_api.push(Reply(text='{"actions": []}'))
    second = DaemonProcess(home=home, env=env).start()
    try:
        with second.client() as c:
            r = c.post("/v1/dream/run", json={"cwd": str(project)})
            assert r.status_code == 202, r.text
    finally:
        second.kill()


def test_scheduler_check_distils_daily_logs_when_gates_open(home: Path, project: Path, clock: ManualClock) -> None:
    settings = make_settings(home)
    settings.dream.min_sessions = 0
    daemon = Daemon(settings, clock=clock)
    store = daemon.stores.for_cwd(str(project))
    store.save(name="Existing", description="Deploys go through the staging cluster first", type="project", body="x")
    log_file = store.path / "logs" / "2026" / "03" / "2026-03-03.md"
    log_file.parent.mkdir(parents=True)
    log_file.write_text(
        "# 2026-03-03\n- 10:00 [feedback] Never force-push to main\n- 11:00 Deploys go through the staging cluster "
        "first\n- 12:00 The demo is tomorrow\n"
    )
    assert len(daemon.dream.check_all()) == 1
    daemon.dream.wait()
    names = {h.description for h in store.all_headers()}
    assert "Never force-push to main" in names and "The demo is 2026-03-04" in names
    assert len(names) == 3  # the bullet already known was not duplicated
    assert daemon.dream.check_all() == []  # time gate now closed
    clock.advance(timedelta(hours=25))
    daemon.dream.check_all()
    daemon.dream.wait()
    assert len(store.all_headers()) == 3  # a processed log is not distilled twice
    daemon.state.close()


def test_daily_log_mode_extraction_then_dream_distils_into_topic_files(
    home: Path, project: Path, clock: ManualClock
) -> None:
    settings = make_settings(home)
    settings.memory.mode = "daily-log"
    with serve(Daemon(settings, clock=clock)) as live:
        writer = new_session(settings.transcript_roots[0], str(project))
        writer.user("Remember: always tag releases with a v prefix, because the deploy script expects it.")
        job_id = live.client.post(
            "/v1/events/turn-end",
            json={"session_id": writer.session_id, "transcript_path": str(writer.path), "cwd": str(project)},
        ).json()["job_id"]
        clock.advance(limits.EXTRACT_SETTLE_SECONDS)  # the job waits out its settle delay on the daemon's clock
        deadline = time.monotonic() + 15
        while (job := live.client.get(f"/v1/jobs/{job_id}").json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(POLL_SECONDS)
        assert job["status"] == "done" and job["memories_written"][0].startswith("logs:")
        assert (
            live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"] == []
        )  # MEMORY.md untouched in this mode
        run = wait_run(live, project, live.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"])
        assert run["status"] == "done" and run["changes"] and "distilled" in run["changes"][0]["why"]
        memories = live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
        assert len(memories) == 1 and memories[0]["type"] == "feedback" and "v prefix" in memories[0]["description"]
        body = live.client.get(f"/v1/memories/{memories[0]['filename']}", params={"cwd": str(project)}).json()["body"]
        assert "**Why:** the deploy script expects it" in body
