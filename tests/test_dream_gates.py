"""Auto-Dream edges the main dream tests leave open: unforced runs obey gates 1-3, status shows
every gate's value, the session gate's folder matching, the project root surviving a restart,
dead (zombie) holders, and LLM writes whose filename does not match their type."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from memoryd.base.clock import ManualClock
from memoryd.dream.lock import ConsolidationLock, pid_alive
from memoryd.dream.service import GatesClosed
from memoryd.service.daemon import Daemon
from memoryd.store.paths import project_root, sanitize_path
from tests.conftest import make_settings
from tests.support.messages_api import Reply, ScriptedMessagesAPI


def touch_sessions(folder: Path, count: int, mtime: float, prefix: str = "s") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        path = folder / f"{prefix}{i}.jsonl"
        path.write_text('{"type":"user"}\n')
        os.utime(path, (mtime + i, mtime + i))


def by_name(gates: list) -> dict:
    return {(g["name"] if isinstance(g, dict) else g.name): g for g in gates}


def wait_done(daemon: Daemon) -> None:
    daemon.dream.wait(20)


def test_unforced_run_obeys_gates_1_to_3(home: Path, project: Path) -> None:
    clock = ManualClock()
    daemon = Daemon(make_settings(home), clock=clock)
    store = daemon.stores.for_cwd(str(project))
    store.save(name="A", description="something to consolidate", type="user", body="x")
    lock = ConsolidationLock(store.path)
    lock.path.write_text("")
    recent = clock.time() - 3600
    os.utime(lock.path, (recent, recent))
    with pytest.raises(GatesClosed) as err:
        daemon.dream.run(str(project), force=False)
    assert err.value.status == 409 and "'time'" in err.value.message
    clock.advance(timedelta(hours=23))  # exactly 24 h since: time opens, no sessions → the session gate refuses
    with pytest.raises(GatesClosed) as err:
        daemon.dream.run(str(project), force=False)
    assert "'sessions'" in err.value.message
    with pytest.raises(GatesClosed) as err:  # that refusal stamped the scan: now the throttle refuses
        daemon.dream.run(str(project), force=False)
    assert "'scan_throttle'" in err.value.message
    run_id = daemon.dream.run(str(project), force=True)  # forced: gates 1-3 skipped
    wait_done(daemon)
    assert daemon.dream.runs(str(project))[0].run_id == run_id


def test_unforced_run_starts_when_every_gate_is_open(home: Path, project: Path) -> None:
    clock = ManualClock()
    settings = make_settings(home)
    daemon = Daemon(settings, clock=clock)
    store = daemon.stores.for_cwd(str(project))
    store.save(name="A", description="something to consolidate", type="user", body="x")
    touch_sessions(
        settings.transcript_roots[0] / sanitize_path(str(project_root(str(project)))),
        settings.dream.min_sessions + 1,
        time.time() - 100,
    )
    run_id = daemon.dream.run(str(project), force=False)
    wait_done(daemon)
    run = daemon.dream.runs(str(project))[0]
    assert run.run_id == run_id and run.forced is False and run.status == "done"


def test_status_shows_every_gate_even_when_time_is_closed(home: Path, project: Path) -> None:
    clock = ManualClock()
    settings = make_settings(home)
    daemon = Daemon(settings, clock=clock)
    store = daemon.stores.for_cwd(str(project))
    store.path.mkdir(parents=True, exist_ok=True)
    lock = ConsolidationLock(store.path)
    lock.path.write_text("")
    recent = clock.time() - 60
    os.utime(lock.path, (recent, recent))
    touch_sessions(settings.transcript_roots[0] / sanitize_path(str(project_root(str(project)))), 3, recent + 1)
    gates = by_name(daemon.dream.status(str(project)).gates)
    assert list(gates) == ["time", "scan_throttle", "sessions", "lock"]
    assert gates["time"].passes is False
    assert gates["sessions"].value == 2  # three touched since, the newest excluded
    assert daemon.dream.state.query_one("SELECT * FROM dream_scans") is None  # status records no scan


def test_session_gate_counts_only_this_projects_main_transcripts(home: Path, project: Path) -> None:
    clock = ManualClock()
    settings = make_settings(home)
    daemon = Daemon(settings, clock=clock)
    store = daemon.stores.for_cwd(str(project))
    root = settings.transcript_roots[0]
    folder = sanitize_path(str(project_root(str(project))))
    lock = ConsolidationLock(store.path)
    store.path.mkdir(parents=True, exist_ok=True)
    lock.path.write_text("")
    last = time.time() - 10_000
    os.utime(lock.path, (last, last))
    touch_sessions(root / folder, 3, last - 500, prefix="old")  # before the last consolidation
    touch_sessions(root / folder, 2, last + 10)
    touch_sessions(root / f"{folder}-packages-api", 2, last + 20, prefix="sub")  # launched in a subdirectory
    touch_sessions(root / f"{folder}x", 4, last + 30)  # another project whose name extends this one
    touch_sessions(root / folder / "s0" / "subagents", 3, last + 40, prefix="agent")  # subagent transcripts
    # counted: s0, s1, sub0, sub1 → 4, minus the newest (the current session) → 3
    assert by_name(daemon.dream.status(str(project)).gates)["sessions"].value == 3


def test_project_root_survives_a_restart_for_discovered_dirs(home: Path, project: Path) -> None:
    clock = ManualClock()
    settings = make_settings(home)
    first = Daemon(settings, clock=clock)
    store = first.stores.for_cwd(str(project))
    store.save(name="A", description="something to consolidate", type="user", body="x")
    first.dream.status(str(project))  # a request named the cwd: the root is recorded
    first.state.close()
    touch_sessions(settings.transcript_roots[0] / sanitize_path(str(project_root(str(project)))), 4, time.time() - 100)
    second = Daemon(settings, clock=clock)
    (found,) = second.stores.discover()  # known only from disk: no request named its cwd yet
    assert second.stores.project_root_of(found.path) is None
    sessions = by_name(second.dream.gates.check(found, full=True))["sessions"]
    assert sessions.value == 3


def test_killed_unreaped_holder_counts_as_dead(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = ConsolidationLock(tmp_path)
        lock.path.write_text(str(child.pid))
        assert lock.held_by_other(time.time()) == child.pid
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while pid_alive(child.pid) and time.monotonic() < deadline:  # a zombie until reaped
            time.sleep(0.01)
        assert not pid_alive(child.pid)  # killed but not reaped yet: a zombie, dead for the lock
        assert lock.try_acquire(time.time()) is not None
    finally:
        child.kill()
        child.wait()


def test_llm_write_with_a_filename_of_another_type_is_dropped(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    clock = ManualClock()
    daemon = Daemon(make_settings(home, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=messages_api.url), clock=clock)
    store = daemon.stores.for_cwd(str(project))
    store.save(name="Editor", description="The user edits in Helix", type="user", body="Helix")
    before = store.read_raw("user_editor.md")
    plan = {
        "actions": [
            {
                "op": "write",
                "filename": "user_editor.md",
                "name": "Editor",
                "type": "project",
                "description": "d",
                "body": "b",
            }
        ]
    }
    messages_api.push(Reply(text=json.dumps(plan)))
    daemon.dream.run(str(project), force=True)
    wait_done(daemon)
    run = daemon.dream.runs(str(project))[0]
    assert run.status == "done" and run.changes == []
    assert any("user_editor.md as type project" in n and "it is a user memory" in n for n in run.notes)
    assert store.read_raw("user_editor.md") == before
    assert "Today is 2026-03-04." in "\n".join(messages_api.texts_sent())  # the injected clock, not the wall clock


def test_undo_of_a_distilling_run_makes_its_log_new_again(home: Path, project: Path) -> None:
    clock = ManualClock()
    daemon = Daemon(make_settings(home), clock=clock)
    store = daemon.stores.for_cwd(str(project))
    store.save(name="Existing", description="Deploys go through the staging cluster first", type="project", body="x")
    log_file = store.path / "logs" / "2026" / "03" / "2026-03-03.md"
    log_file.parent.mkdir(parents=True)
    log_file.write_text("# 2026-03-03\n- [feedback] Never force-push to main\n")
    first = daemon.dream.run(str(project), force=True)
    wait_done(daemon)
    assert len(store.all_headers()) == 2
    daemon.dream.undo(first)
    assert [h.description for h in store.all_headers()] == ["Deploys go through the staging cluster first"]
    daemon.dream.run(str(project), force=True)  # the log is distilled again, not lost
    wait_done(daemon)
    assert "Never force-push to main" in {h.description for h in store.all_headers()}


def test_llm_context_is_bounded_lists_every_file_and_keeps_unseen_logs_pending(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    from memoryd.base import limits

    clock = ManualClock()
    daemon = Daemon(make_settings(home, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=messages_api.url), clock=clock)
    store = daemon.stores.for_cwd(str(project))
    for i in range(20):
        store.save(
            name=f"Topic {i}",
            description=f"Distinct fact number {i}",
            type="project",
            body=f"fact{i} " + "lorem ipsum " * 330,
        )
    log_file = store.path / "logs" / "2026" / "03" / "2026-03-03.md"
    log_file.parent.mkdir(parents=True)
    log_file.write_text("- a very long log line\n" * 1000)
    messages_api.push(Reply(text='{"actions": []}'))
    daemon.dream.run(str(project), force=True)
    wait_done(daemon)
    assert daemon.dream.runs(str(project))[0].status == "done"
    user = messages_api.requests[-1]["messages"][0]["content"]
    user = user if isinstance(user, str) else "".join(b["text"] for b in user)
    assert len(user) <= limits.DREAM_LLM_CONTEXT_MAX_CHARS + 100
    assert all(f"project_topic-{i}.md" in user.split("=== ")[0] for i in range(20))  # the manifest names every file
    assert "files not shown for size" in user and "daily log" not in user
    assert daemon.dream.state.query("SELECT * FROM dream_logs") == []  # the unseen log stays pending
