"""Turn-end extraction through the real API: cursors, skips, secrets, LLM path, crash recovery."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoryd.base import limits
from memoryd.extract.offline import extract_explicit
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, serve
from tests.support.clock import POLL_SECONDS, SteppingClock, step_over_settle
from tests.support.messages_api import RETRY_NOW, Reply, ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env
from tests.support.transcripts import TranscriptWriter, new_session


def wait_job(client: httpx.Client, job_id: str, timeout: float = 15.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"job {job_id} did not finish: {job}")


def turn_end(live: LiveDaemon, writer: TranscriptWriter, **extra: Any) -> dict[str, Any]:
    body = {
        "session_id": writer.session_id,
        "transcript_path": str(writer.path),
        "cwd": writer.cwd,
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        **extra,
    }
    r = live.client.post("/v1/events/turn-end", json=body)
    assert r.status_code == 202, r.text
    step_over_settle(live.daemon)
    return wait_job(live.client, r.json()["job_id"])


def queue_turn_end(daemon: Daemon, writer: TranscriptWriter, session_id: str | None = None) -> str:
    """Queue extraction for a turn end without starting the daemon's workers (the test drives them)."""
    return daemon.extraction.enqueue_turn_end(
        session_id or writer.session_id, writer.path, writer.cwd, daemon.stores.memory_dir_for(writer.cwd)
    )


def memories(live: LiveDaemon, cwd: str) -> list[dict[str, Any]]:
    return live.client.get("/v1/memories", params={"cwd": cwd}).json()["memories"]


@pytest.fixture
def session(live: LiveDaemon, project: Path) -> TranscriptWriter:
    return new_session(live.daemon.settings.transcript_roots[0], str(project))


def test_explicit_request_is_extracted_once(live: LiveDaemon, session: TranscriptWriter) -> None:
    session.user("Remember: always use pnpm, never npm, because the lockfile is pnpm's.")
    session.assistant("Understood, I will use pnpm.")
    job = turn_end(live, session)
    assert job["status"] == "done" and len(job["memories_written"]) == 1, job
    saved = memories(live, session.cwd)
    assert len(saved) == 1 and saved[0]["type"] == "feedback"
    body = live.client.get(f"/v1/memories/{saved[0]['filename']}", params={"cwd": session.cwd}).json()["body"]
    assert (
        body == "Always use pnpm, never npm.\n\n**Why:** the lockfile is pnpm's."
    )  # no "How to apply": no when or where was said
    # The same turn-end again: the cursor has moved, nothing new, no duplicate.
    again = turn_end(live, session)
    assert again["status"] == "skipped" and "no prose" in again["reason"]
    assert len(memories(live, session.cwd)) == 1


def test_offline_extractor_types_and_reasons() -> None:
    from datetime import date

    found = extract_explicit(
        [
            (
                "I'm a backend engineer working mostly in Go. From now on, run the linter before committing.",
                date(2026, 3, 4),
            ),
            ("Don't mock the database in tests since mocks hid a broken migration. What time is it?", date(2026, 3, 4)),
            ("Remember that the merge freeze starts next Thursday.", date(2026, 3, 4)),
            ("I prefer tabs over spaces.", None),
            ("ok", None),
        ]
    )
    by_type: dict[str, list[str]] = {}
    for c in found:
        by_type.setdefault(c.type, []).append(c.description)
    assert any("backend engineer" in d for d in by_type["user"])
    assert any("tabs" in d for d in by_type["user"])
    assert any("linter" in d for d in by_type["feedback"])
    mock = next(c for c in found if "mock" in c.description.lower())
    assert "**Why:** mocks hid a broken migration" in mock.body
    freeze = next(c for c in found if "freeze" in c.description)
    assert freeze.type == "project" and "2026-03-05" in freeze.description  # Thursday after Wednesday 2026-03-04


def test_injected_recalls_are_not_re_extracted(live: LiveDaemon, session: TranscriptWriter) -> None:
    from memoryd.base import limits

    session.user(
        f"<system-reminder>\n{limits.INJECTED_MARKER}\nremember: always deploy on Fridays\n</system-reminder>\nwhat "
        "does the build script do"
    )
    session.attachment("Remember: never use tabs")
    session.assistant("It compiles the assets.")
    job = turn_end(live, session)
    assert job["status"] == "done" and job["memories_written"] == [], job
    assert memories(live, session.cwd) == []


def test_agent_writing_memory_itself_skips_and_advances(live: LiveDaemon, session: TranscriptWriter) -> None:
    memory_dir = live.client.get("/v1/index", params={"cwd": session.cwd}).json()["memory_dir"]
    session.user("Remember that I prefer short answers.")
    session.assistant(
        "Saving it.", tools=[("Write", {"file_path": f"{memory_dir}/user_short-answers.md", "content": "x"})]
    )
    job = turn_end(live, session)
    assert job["status"] == "skipped" and "wrote to the memory dir" in job["reason"]
    session.user("thanks, now run the tests")
    assert turn_end(live, session)["memories_written"] == []  # the skipped turn is not read again


def test_tool_output_only_is_skipped(live: LiveDaemon, session: TranscriptWriter) -> None:
    session.assistant("", tools=[("Bash", {"command": "ls"})])
    session.tool_result("remember: this is tool output, not the user")
    job = turn_end(live, session)
    assert job["status"] == "skipped" and "no prose" in job["reason"]


def test_throttle_waits_for_n_turns(home: Path, project: Path) -> None:
    settings = make_settings(home)
    settings.extract.every_n_turns = 2
    with serve(Daemon(settings, clock=SteppingClock())) as live:
        writer = new_session(settings.transcript_roots[0], str(project))
        writer.user("Remember to always write changelog entries.")
        first = turn_end(live, writer)
        assert first["status"] == "skipped" and "throttled: turn 1 of every 2" in first["reason"]
        writer.assistant("ok")
        second = turn_end(live, writer)
        assert second["status"] == "done" and len(second["memories_written"]) == 1  # turn 1's words were kept


def test_secrets_in_dialogue_never_reach_a_file(live: LiveDaemon, session: TranscriptWriter) -> None:
    session.user("Remember that the staging key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD.")
    job = turn_end(live, session)
    assert job["status"] == "done" and job["memories_written"] == [] and job["refused"][0]["code"] == "secret_detected"
    memory_dir = Path(live.client.get("/v1/index", params={"cwd": session.cwd}).json()["memory_dir"])
    assert not any("sk-ant" in p.read_text() for p in memory_dir.glob("*.md")) if memory_dir.exists() else True


def test_foreign_transcript_path_is_refused(live: LiveDaemon, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "s.jsonl"
    outside.parent.mkdir()
    outside.write_text("{}\n")
    for path in (str(outside), str(live.daemon.settings.transcript_roots[0] / ".." / "elsewhere" / "s.jsonl")):
        r = live.client.post(
            "/v1/events/turn-end", json={"session_id": "s1", "transcript_path": path, "cwd": str(project)}
        )
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", r.text
    r = live.client.post(
        "/v1/events/turn-end", json={"session_id": "s1", "transcript_path": "relative/s.jsonl", "cwd": str(project)}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_path", r.text  # malformed, not foreign


def test_bad_turn_end_bodies(live: LiveDaemon, project: Path) -> None:
    r = live.client.post("/v1/events/turn-end", content=b"{nope", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
    r = live.client.post("/v1/events/turn-end", json={"cwd": str(project)})
    assert r.status_code == 422 and "session_id" in r.json()["error"]["message"]
    assert live.client.get("/v1/jobs/job_nope").status_code == 404


def test_unreadable_transcript_fails_visibly(live: LiveDaemon, session: TranscriptWriter) -> None:
    r = live.client.post(
        "/v1/events/turn-end",
        json={"session_id": session.session_id, "transcript_path": str(session.path), "cwd": session.cwd},
    )
    step_over_settle(live.daemon)
    deadline, stepped = time.monotonic() + 15, 0
    while (job := live.client.get(f"/v1/jobs/{r.json()['job_id']}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        if job["status"] == "queued" and job["attempts"] > stepped:  # retried EXTRACT_RETRY_SECONDS after each attempt
            stepped = job["attempts"]
            step_over_settle(live.daemon, limits.EXTRACT_RETRY_SECONDS)
        time.sleep(POLL_SECONDS)
    assert job["status"] == "failed" and "unreadable" in job["reason"]


def test_last_assistant_message_is_used_when_the_transcript_lags(live: LiveDaemon, session: TranscriptWriter) -> None:
    session.assistant("", tools=[("Bash", {"command": "make"})])
    job = turn_end(live, session, last_assistant_message="Build fixed. Remember: always run make before pushing.")
    assert job["status"] == "done"  # prose came only from the hook's last_assistant_message


# --------------------------------------------------------------------------- LLM path
@pytest.fixture
def llm_live(home: Path, messages_api: ScriptedMessagesAPI, request: pytest.FixtureRequest) -> Iterator[LiveDaemon]:
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    reply = getattr(getattr(request.node, "callspec", None), "params", {}).get("reply")
    settings.llm.timeout_seconds = (
        0.5 if isinstance(reply, Reply) and reply.delay else 2
    )  # a scripted hang times out sooner
    with serve(Daemon(settings, clock=SteppingClock())) as live:
        yield live


def test_llm_extraction_writes_and_updates(
    llm_live: LiveDaemon, messages_api: ScriptedMessagesAPI, project: Path
) -> None:
    writer = new_session(llm_live.daemon.settings.transcript_roots[0], str(project))
    writer.user("we moved the API to Postgres 16 last week, by the way")
    answer = [
        {
            "name": "Database version",
            "type": "project",
            "description": "The API runs on Postgres 16 since 2026-02-23",
            "body": "Moved to Postgres 16.\n\n**Why:** upgrade.\n**How to apply:** use PG16 features.",
        }
    ]
    messages_api.push(Reply(text="Here you go:\n```json\n" + json.dumps(answer) + "\n```"))
    job = turn_end(llm_live, writer)
    assert job["status"] == "done" and job["reason"].startswith("llm") and len(job["memories_written"]) == 1
    sent = messages_api.requests[-1]
    assert "we moved the API to Postgres 16" in sent["messages"][0]["content"] and "What NOT to save" in sent["system"]
    filename = job["memories_written"][0]
    writer.user("correction: it is Postgres 17")
    update = [
        {
            "name": "Database version",
            "type": "project",
            "description": "The API runs on Postgres 17",
            "body": "Postgres 17.",
            "filename": filename,
        }
    ]
    messages_api.push(Reply(text=json.dumps(update)))
    job2 = turn_end(llm_live, writer)
    assert job2["memories_written"] == [filename]
    assert filename in messages_api.requests[-1]["messages"][0]["content"]  # the manifest was given
    listed = memories(llm_live, str(project))
    assert len(listed) == 1 and "Postgres 17" in listed[0]["description"]
    usage = llm_live.client.get("/v1/status").json()["llm_usage"]["by_purpose"]["extract"]
    assert usage["calls"] == 2 and usage["input_tokens"] == 20


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="I think nothing here is useful, sorry!"),
        Reply(status=500, headers=RETRY_NOW),
        Reply(raw_body="<html>oops"),
        Reply(delay=3.0),
    ],
    ids=["garbage", "500", "not-json", "timeout"],
)
def test_llm_failure_falls_back_to_the_offline_extractor(
    llm_live: LiveDaemon, messages_api: ScriptedMessagesAPI, project: Path, reply: Reply
) -> None:
    writer = new_session(llm_live.daemon.settings.transcript_roots[0], str(project))
    writer.user("From now on, answer in British English.")
    messages_api.push(reply)
    job = turn_end(llm_live, writer)
    assert job["status"] == "done" and job["reason"].startswith("offline (LLM"), job
    assert len(job["memories_written"]) == 1


# --------------------------------------------------------------------------- crash recovery
@pytest.mark.e2e
def test_kill_9_mid_job_then_restart_runs_the_job_again(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    roots = home / "transcripts"
    (home / "config.toml").write_text(f'[transcripts]\nroots = ["{roots}"]\n[llm]\ntimeout_seconds = 30\n')
    env = daemon_env(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    writer = new_session(roots, str(project))
    writer.user("Remember that releases are cut on Tuesdays.")
    answer = json.dumps(
        [
            {
                "name": "Release day",
                "type": "project",
                "description": "Releases are cut on Tuesdays",
                "body": "Tuesdays.\n\n**Why:** team rule.\n**How to apply:** plan merges.",
            }
        ]
    )
    messages_api.push(Reply(text=answer, delay=30))  # the first attempt hangs in the LLM call
    first = DaemonProcess(home=home, env=env).start()
    with first.client() as c:
        memory_dir = Path(c.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
        job_id = c.post(
            "/v1/events/turn-end",
            json={"session_id": writer.session_id, "transcript_path": str(writer.path), "cwd": str(project)},
        ).json()["job_id"]
        deadline = time.monotonic() + 10
        while c.get(f"/v1/jobs/{job_id}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(POLL_SECONDS)
        while not messages_api.requests:
            assert time.monotonic() < deadline
            time.sleep(POLL_SECONDS)
    first.kill()  # SIGKILL mid-job
    assert (
        not memory_dir.exists()
        or sorted(p.name for p in memory_dir.iterdir() if not p.name.startswith(".memoryd")) == []
    )  # nothing half-written
    messages_api.push(Reply(text=answer))
    second = DaemonProcess(home=home, env=env).start()
    try:
        with second.client() as c:
            job = wait_job(c, job_id, timeout=20)
            assert job["status"] == "done" and job["attempts"] == 2, job
            files = c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
            assert [f["name"] for f in files] == ["Release day"]
    finally:
        second.kill()


def test_repeated_turn_ends_coalesce_into_one_queued_job(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home))  # not started: jobs stay queued
    writer = new_session(daemon.settings.transcript_roots[0], str(project))
    writer.user("Remember: always squash merge.")
    ids = {queue_turn_end(daemon, writer) for _ in range(5)}
    assert len(ids) == 1 and daemon.extraction.jobs.counts()["queued"] == 1
    other = queue_turn_end(daemon, writer, "another-session")
    assert other not in ids and daemon.extraction.jobs.counts()["queued"] == 2
    assert daemon.extraction.run_pending() == 2
    daemon.state.close()


def test_queue_is_bounded(home: Path, project: Path) -> None:
    from memoryd.extract import QueueFull

    daemon = Daemon(make_settings(home))
    daemon.extraction.jobs.queue_max = 3
    writer = new_session(daemon.settings.transcript_roots[0], str(project))
    writer.user("hello there")
    for i in range(3):
        queue_turn_end(daemon, writer, f"s{i}")
    with pytest.raises(QueueFull):
        queue_turn_end(daemon, writer, "s3")
    daemon.state.close()


def test_turn_end_arriving_while_a_job_runs_is_not_throttled_away(
    llm_live: LiveDaemon, messages_api: ScriptedMessagesAPI, project: Path
) -> None:
    """The job consumes only the turns it saw: a turn-end counted while it waits on the LLM runs next."""
    import threading

    entered, release = threading.Event(), threading.Event()

    def handler(body: dict[str, Any]) -> Reply:
        if not entered.is_set():
            entered.set()
            release.wait(timeout=30)  # hold the first job inside its LLM call
        return Reply(text="[]")

    messages_api.handler = handler
    writer = new_session(llm_live.daemon.settings.transcript_roots[0], str(project))
    writer.user("we use trunk-based development here")
    body = {"session_id": writer.session_id, "transcript_path": str(writer.path), "cwd": str(project)}
    first_id = llm_live.client.post("/v1/events/turn-end", json=body).json()["job_id"]
    step_over_settle(llm_live.daemon)
    assert entered.wait(timeout=15)
    writer.user("and the release train leaves every second Tuesday")
    second_id = llm_live.client.post("/v1/events/turn-end", json=body).json()["job_id"]
    assert second_id != first_id
    step_over_settle(llm_live.daemon)
    release.set()
    assert wait_job(llm_live.client, first_id)["status"] == "done"
    second = wait_job(llm_live.client, second_id)
    assert second["status"] == "done" and second["reason"].startswith("llm"), second
    assert "release train" in messages_api.requests[-1]["messages"][0]["content"]


def test_a_turn_already_read_by_an_earlier_job_is_skipped_as_covered(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home))  # not started: the test drives the worker's steps in order
    ext = daemon.extraction
    writer = new_session(daemon.settings.transcript_roots[0], str(project))
    writer.user("Remember: always squash merge.")
    first_id = queue_turn_end(daemon, writer)
    running = ext.jobs.claim(ignore_delay=True)
    assert running is not None and running.job_id == first_id
    writer.user("From now on, run the linter before committing.")
    second_id = queue_turn_end(daemon, writer)  # before the job reads
    ext._finish(running, ext.run_job(running))
    assert len(ext.get_job(first_id).memories_written) == 2  # the first job read both turns
    assert ext.run_pending() == 1
    second = ext.get_job(second_id)
    assert second.status == "skipped" and second.reason.startswith("already covered"), second
    daemon.state.close()


def test_rewritten_transcript_tail_is_not_extracted_twice(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home))
    ext = daemon.extraction
    writer = new_session(daemon.settings.transcript_roots[0], str(project))
    writer.user("Remember: always use pnpm.")
    writer.assistant("Understood. " + "I will use pnpm for every install from now on. " * 5)
    job1 = queue_turn_end(daemon, writer)
    ext.run_pending()
    assert len(ext.get_job(job1).memories_written) == 1
    lines = writer.path.read_bytes().splitlines(keepends=True)
    writer.path.write_bytes(lines[0])  # CC removed the assistant entry (tail truncated, same file)
    writer.user("From now on, run the linter before committing.")
    job2 = queue_turn_end(daemon, writer)
    ext.run_pending()
    done = ext.get_job(job2)
    # Re-read from 0, but the pnpm prompt (uuid already seen) is not extracted again.
    assert done.status == "done" and done.reason.startswith("offline: 1 written, 0 unchanged"), done
    assert len(daemon.stores.for_cwd(str(project)).all_headers()) == 2
    daemon.state.close()


def test_relative_write_into_the_memory_dir_counts_as_the_agent_writing_memory(
    live: LiveDaemon, session: TranscriptWriter
) -> None:
    import os

    memory_dir = live.client.get("/v1/index", params={"cwd": session.cwd}).json()["memory_dir"]
    relative = os.path.relpath(os.path.join(memory_dir, "user_x.md"), session.cwd)
    assert not os.path.isabs(relative)
    session.user("Remember that I prefer short answers.")
    session.assistant("Saving it.", tools=[("Edit", {"file_path": relative, "old_string": "a", "new_string": "b"})])
    job = turn_end(live, session)
    assert job["status"] == "skipped" and "wrote to the memory dir" in job["reason"], job


def test_a_queued_prompt_is_extracted(live: LiveDaemon, session: TranscriptWriter) -> None:
    session.user("what does the build script do")
    session.queued_prompt("Remember: the staging database is read-only.")
    session.assistant("The build script bundles the app.")
    job = turn_end(live, session)
    assert job["status"] == "done", job
    assert any("read-only" in m["description"] for m in memories(live, session.cwd))


def test_old_bookkeeping_is_pruned_at_the_retention_edge(live: LiveDaemon, session: TranscriptWriter) -> None:
    session.user("Remember: tag releases with a leading v.")
    session.assistant("Noted.")
    assert turn_end(live, session)["status"] == "done"
    extraction, state = live.daemon.extraction, live.daemon.state
    turns = state.query_one("SELECT updated_at FROM extraction_turns WHERE session_id = ?", (session.session_id,))[
        "updated_at"
    ]
    job_time = state.query_one("SELECT MAX(updated_at) AS t FROM jobs WHERE session_id = ?", (session.session_id,))["t"]
    read_at = state.query_one("SELECT updated_at, mtime FROM transcript_files WHERE path = ?", (str(session.path),))
    retention = limits.EXTRACT_RETENTION_DAYS * 86400
    # One second short of the retention: nothing goes.
    earliest = min(turns, job_time, read_at["updated_at"], read_at["mtime"])
    assert extraction.prune(now=earliest + retention - 1) == {"jobs": 0, "sessions": 0, "transcripts": 0}
    latest = max(turns, job_time, read_at["updated_at"], read_at["mtime"])
    assert extraction.prune(now=latest + retention + 1) == {"jobs": 1, "sessions": 1, "transcripts": 1}
    assert state.query_one("SELECT COUNT(*) AS n FROM jobs WHERE session_id = ?", (session.session_id,))["n"] == 0
    for table in ("transcript_seen", "transcript_seen_batches"):
        assert state.query_one(f"SELECT COUNT(*) AS n FROM {table} WHERE path = ?", (str(session.path),))["n"] == 0
    assert len(memories(live, session.cwd)) == 1  # memories themselves are never pruned


def test_a_sessions_requests_are_written_as_a_careful_person_would(live: LiveDaemon, session: TranscriptWriter) -> None:
    """Issue 32's session through the real daemon: short whole-word titles, statements without request
    phrases, bodies that say it once, the decision kept with its reason, case and code unchanged."""
    from memoryd.extract.shape import repeated_sentences, starts_with_request
    from tests.support.offline_quality import title_faults

    session.user(
        "I'm a data engineer, mostly Scala and Spark, new to this React frontend. "
        "Please always run linter ruff check --fix before committing, from now on."
    )
    session.user(
        "Please make sure to keep API error messages in English because support greps them. "
        "We decided to drop Python 3.9 support at the end of the quarter because of the new typing features."
    )
    session.assistant("Understood.")
    job = turn_end(live, session)
    assert job["status"] == "done" and len(job["memories_written"]) == 4, job
    by_type: dict[str, list[dict[str, Any]]] = {}
    for listed in memories(live, session.cwd):
        full = live.client.get(f"/v1/memories/{listed['filename']}", params={"cwd": session.cwd}).json()
        by_type.setdefault(full["type"], []).append(full)
        assert not title_faults(full["name"], full["description"]), full["name"]
        assert not starts_with_request(full["description"]) and repeated_sentences(full["body"]) == [], full
        assert "apply this whenever" not in full["body"] and "asked for this explicitly" not in full["body"]
    [decision] = by_type["project"]
    assert decision["body"].endswith("**Why:** the new typing features.")
    assert any("`ruff check --fix`" in m["description"] for m in by_type["feedback"])
    assert any(m["body"].startswith("Keep API error messages in English.") for m in by_type["feedback"])


def test_a_target_it_cannot_read_is_left_as_it_is(home: Path, project: Path) -> None:
    """#40 bug 2: a read error on the memory an update targets refuses the update; it never saves blind.
    A big watched dir trusts its table between the watcher's events: a hand edit the watcher has not
    reported yet (here a NUL byte, which the store refuses to read) is what the read meets."""
    daemon = Daemon(make_settings(home))  # not started: no watcher, the test drives the job
    store = daemon.stores.for_cwd(str(project))
    target = store.save(
        name="Package manager", description="Use pnpm, never npm", type="feedback", body="Use pnpm."
    ).memory.path
    for i in range(limits.STORE_WATCHED_TRUST_MIN_FILES):
        (store.path / f"project_note-{i}.md").write_text(
            f"---\nname: Note {i}\ndescription: note {i}\ntype: project\n---\nbody {i}\n", encoding="utf-8"
        )
    store.set_watched(True)
    assert any(h.name == "Package manager" for h in store.all_headers())  # one sweep; trusted from here
    edited = target.read_bytes() + b"\nPasted from the wiki: \x00 see the lockfile notes.\n"
    with open(target, "r+b") as fh:  # in place, as an editor that rewrites the file does: the dir's listing stays
        fh.write(edited)
    writer = new_session(daemon.settings.transcript_roots[0], str(project))
    writer.user("Remember: use pnpm, never npm, because the lockfile is pnpm's.")
    job_id = queue_turn_end(daemon, writer)
    daemon.extraction.run_pending()
    job = daemon.extraction.get_job(job_id)
    assert target.read_bytes() == edited, "the file it could not read was overwritten"
    assert job.memories_written == [], job
    [refused] = job.refused
    assert refused["code"] == "target_unreadable" and "NUL" in refused["reason"], refused
    daemon.state.close()


def test_a_rule_said_again_leaves_the_memory_a_person_named(live: LiveDaemon, session: TranscriptWriter) -> None:
    """#39 item 7: the same rule in other words is recognised: no rename, no filler, nothing rewritten;
    a new reason is added under the person's own text."""
    cwd = session.cwd
    r = live.client.post(
        "/v1/memories",
        json={
            "cwd": cwd,
            "name": "Tests use vitest, not jest",
            "description": "Tests run with vitest; jest is not installed",
            "type": "feedback",
            "body": "We moved from jest to vitest in 2025.",
        },
    )
    assert r.status_code == 201, r.text
    filename = r.json()["filename"]
    path = live.daemon.stores.for_cwd(cwd).path / filename
    before = path.read_bytes()
    session.user("we don't use jest here, I told you before: tests run with vitest")
    job = turn_end(live, session)
    assert job["status"] == "done" and job["reason"].startswith("offline: 0 written, 1 unchanged"), job
    assert path.read_bytes() == before and [m["filename"] for m in memories(live, cwd)] == [filename]
    session.user("we don't use jest here, because the config is ESM-only")
    job = turn_end(live, session)
    assert job["memories_written"] == [filename], job
    after = live.client.get(f"/v1/memories/{filename}", params={"cwd": cwd}).json()
    assert after["name"] == "Tests use vitest, not jest" and after["description"].startswith("Tests run with vitest")
    assert after["body"] == "We moved from jest to vitest in 2025.\n\n**Why:** the config is ESM-only."


# ---------------------------------------------------------------- how names read (#51 items 7 and 8)
@pytest.mark.parametrize(
    "said, name",
    [
        # a phrase that says nothing ("when you're") is left out, so the key words after it still fit
        (
            "Remember that the SSO login only works when you are on the corporate VPN.",
            "SSO login only works on corporate VPN",
        ),
        # never "To wait …" from "remember to"
        (
            "Please remember to wait for the snapshot lock before every deploy.",
            "Wait for the snapshot lock before every deploy",
        ),
        # never "… works when you" nor "… and add gRPC only": no cut ends on a dangling word
        (
            "Keep in mind that the nightly suite only passes when you run it on the GPU runners.",
            "Nightly suite only passes on GPU runners",
        ),
        ("We decided to keep the REST API and add gRPC only for internal calls.", "Keep REST API and add gRPC"),
        # a title is plain words: Markdown code marks are not part of a name
        ("Always use `pnpm install --frozen-lockfile` in CI.", "Use pnpm install --frozen-lockfile in CI"),
    ],
)
def test_extracted_names_are_readable_phrases(said: str, name: str) -> None:
    from memoryd.extract.shape import _CUT_DANGLING

    [found] = extract_explicit([(said, None)])
    assert found.name == name, found
    assert found.name.split()[-1].lower() not in _CUT_DANGLING and "`" not in found.name


@pytest.mark.parametrize(
    "said",
    [
        "From now on, don't not wait for the snapshot lock.",
        "Never skip waiting for the snapshot lock unless nobody isn't migrating, or don't.",
        "Remember: don't wait for the snapshot lock, or maybe not, I don't know yet.",
    ],
)
def test_a_sentence_whose_polarity_cannot_be_decided_is_not_saved(said: str) -> None:
    assert extract_explicit([(said, None)]) == []
    # one negation, or two in a list of rules, decide it: those are kept
    assert [c.name for c in extract_explicit([("Never skip the snapshot lock.", None)])] == [
        "Never skip the snapshot lock"
    ]
