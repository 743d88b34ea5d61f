"""#39: the daemon's log says what memory work happened — one line per save, extraction and recall,
with file names, counts, method and milliseconds, never a body — and not the scheduler's own chatter;
team sync is scheduled only once a team folder is tied to a remote."""

from __future__ import annotations

import logging
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import LiveDaemon
from tests.support.servers import DaemonProcess
from tests.support.transcripts import new_session
from tests.test_extract import turn_end

BODY_WORD = "zanzibarquux"  # in a memory's body: never in the log


def test_the_log_names_saves_and_recalls_and_not_the_scheduler(daemon_process: DaemonProcess, project: Path) -> None:
    daemon_process.start()
    with daemon_process.client() as client:
        r = client.post(
            "/v1/memories",
            json={
                "cwd": str(project),
                "name": "Package manager",
                "description": "Use pnpm, never npm",
                "type": "feedback",
                "body": f"pnpm only; {BODY_WORD}",
            },
        )
        assert r.status_code in (200, 201), r.text
        r = client.post(
            "/v1/recall", json={"cwd": str(project), "query": "which package manager: pnpm?", "session_id": "s-log"}
        )
        assert r.status_code == 200 and r.json()["memories"], r.text
    assert daemon_process.terminate() == 0
    text = (daemon_process.home / "logs" / "memoryd.log").read_text()
    lines = text.splitlines()
    saved = [line for line in lines if "saved new feedback_package-manager.md (api, " in line]
    assert len(saved) == 1 and " ms) in " in saved[0], text
    recalled = [line for line in lines if "recall (rest) gave 1 (feedback_package-manager.md)" in line]
    assert len(recalled) == 1 and "method local" in recalled[0] and " ms; session s-log" in recalled[0], text
    assert "apscheduler" not in text and "Running job" not in text and "TeamService.tick" not in text, text
    assert BODY_WORD not in text and "which package manager" not in text  # neither a body nor the prompt


def test_an_extraction_is_one_line_with_its_files_and_counts(
    live: LiveDaemon, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session = new_session(live.daemon.settings.transcript_roots[0], str(project))
    session.user(f"Remember: always use pnpm, never npm, because the lockfile is pnpm's. {BODY_WORD}")
    session.assistant("Understood, I will use pnpm.")
    with caplog.at_level(logging.INFO, logger="memoryd"):
        job = turn_end(live, session)
        deadline = time.monotonic() + 10  # on_finish runs just after the job is marked done
        while not any(r.getMessage().startswith("extraction ") for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert job["status"] == "done", job
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("extraction ")]
    assert len(lines) == 1 and lines[0].startswith(f"extraction extract {job['job_id']} done: offline: 1 written"), (
        lines
    )
    assert job["memories_written"][0] in lines[0] and " ms since queued" in lines[0]
    assert not any(BODY_WORD in r.getMessage() for r in caplog.records)


def test_team_sync_is_scheduled_only_once_a_team_is_set_up(live: LiveDaemon, project: Path, tmp_path: Path) -> None:
    assert "team-sync" not in live.daemon.scheduler.job_ids()  # no team: nothing runs every 15 s
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    r = live.client.post("/v1/team/init", json={"cwd": str(project), "remote": str(remote), "branch": "memory"})
    assert r.status_code == 200, r.text
    assert "team-sync" in live.daemon.scheduler.job_ids()
