"""Backfill: transcripts written before memoryd watched them are mined on request, once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memoryd.cli.backfill import since_days
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings, serve
from tests.support.clock import POLL_SECONDS
from tests.support.transcripts import new_session


def test_existing_transcripts_are_mined_once_on_request(home: Path, project: Path, tmp_path: Path) -> None:
    settings = make_settings(home)
    root = settings.transcript_roots[0]
    old = new_session(root, str(project))
    old.user("Remember: we deploy with `make ship`, never by hand.")
    old.assistant("Noted.")
    other_project = tmp_path / "other"
    (other_project / ".git").mkdir(parents=True)
    elsewhere = new_session(root, str(other_project))
    elsewhere.user("Remember: the other project pins Node 20.")
    daemon = Daemon(settings)
    daemon.extraction.backfill_pause = 0
    with serve(daemon) as live:
        assert (
            live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"] == []
        )  # nothing mined by itself
        started = live.client.post("/v1/backfill", json={"since_days": 30, "cwd": str(project)})
        assert started.status_code == 202, started.text
        assert started.json()["transcripts"] == 1 and started.json()["jobs_queued"] == 1
        deadline = time.monotonic() + 20
        while (progress := live.client.get("/v1/backfill").json())["active"]:
            assert time.monotonic() < deadline, progress
            time.sleep(POLL_SECONDS)
        assert progress["done"] == 1, progress
        saved = live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
        assert len(saved) == 1 and "make ship" in saved[0]["description"], saved
        assert live.client.get("/v1/memories", params={"cwd": str(other_project)}).json()["memories"] == []
        again = live.client.post("/v1/backfill", json={"since_days": 30, "cwd": str(project)}).json()
        assert again["jobs_queued"] == 0  # what was mined is not mined again
        bad = live.client.post("/v1/backfill", json={"since_days": -1})
        assert bad.status_code in (400, 422) and "since_days" in bad.text


@pytest.mark.parametrize(
    ("text", "days"), [("30d", 30.0), ("12h", 0.5), ("2w", 14.0), ("7", 7.0), ("0d", None), ("soon", None)]
)
def test_since_durations(text: str, days: float | None) -> None:
    assert since_days(text) == days
