"""Review before write and read-only mode, through real turn-ends, REST, the CLI and the web view."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, recall_api, save_memory, serve
from tests.support.clock import SteppingClock
from tests.support.servers import daemon_env
from tests.support.transcripts import TranscriptWriter, new_session
from tests.test_extract import turn_end
from tests.test_ui import csrf_of, login, pid


def write_config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")


@pytest.fixture
def rlive(home: Path) -> Iterator[LiveDaemon]:
    write_config(home, "[extract]\nreview = true\n")
    with serve(Daemon(make_settings(home), clock=SteppingClock())) as live:
        yield live


def pending(live: LiveDaemon, cwd: str) -> list[dict[str, Any]]:
    r = live.client.get("/v1/review", params={"cwd": cwd})
    assert r.status_code == 200, r.text
    return r.json()["items"]  # type: ignore[no-any-return]


def _written(live: LiveDaemon, source: str, text: str | None = None) -> float:
    """memoryd_memories_written_total for one source, from `text` or a fresh /metrics."""
    text = live.client.get("/metrics").text if text is None else text
    found = re.search(rf'^memoryd_memories_written_total{{source="{source}"}} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def propose(live: LiveDaemon, project: Path, text: str, session: TranscriptWriter | None = None) -> dict[str, Any]:
    session = session or new_session(live.daemon.settings.transcript_roots[0], str(project))
    session.user(text)
    session.assistant("Understood.")
    return turn_end(live, session)


def test_extracted_memories_wait_unseen_until_approved(rlive: LiveDaemon, project: Path) -> None:
    job = propose(rlive, project, "Remember: always use pnpm, never npm, because the lockfile is pnpm's.")
    assert job["status"] == "done" and job["memories_written"][0].startswith("review:"), job
    store = rlive.daemon.stores.for_cwd(str(project))
    assert store.all_headers() == [] and not store.served_index().content  # not in MEMORY.md
    assert recall_api(rlive, project, "which package manager, pnpm or npm?")["memories"] == []  # not recalled
    [item] = pending(rlive, str(project))
    assert item["type"] == "feedback" and "pnpm" in item["description"]
    r = rlive.client.patch(
        f"/v1/review/{item['item_id']}", json={"description": "Use pnpm for every install, never npm"}
    )
    assert r.status_code == 200 and r.json()["description"] == "Use pnpm for every install, never npm"
    bad = rlive.client.patch(f"/v1/review/{item['item_id']}", json={"body": "token ghp_" + "a" * 36})
    assert bad.status_code == 422 and pending(rlive, str(project))[0]["body"] == item["body"]  # refused, unchanged
    written = rlive.client.get("/metrics").text
    approved = rlive.client.post(f"/v1/review/{item['item_id']}/approve").json()
    assert approved["status"] == "approved"
    # Counted once, by the store's write path, as a review write (not also as an API write).
    assert _written(rlive, "review") == _written(rlive, "review", written) + 1 and _written(rlive, "api") == _written(
        rlive, "api", written
    )
    assert [h.filename for h in store.all_headers()] == [approved["filename"]]
    assert "Use pnpm for every install" in store.served_index().content
    assert pending(rlive, str(project)) == []
    assert rlive.client.post(f"/v1/review/{item['item_id']}/approve").status_code == 404


def test_a_rejected_memory_is_not_proposed_again(rlive: LiveDaemon, project: Path) -> None:
    text = "Remember: the staging database is reset every night at 02:00 UTC."
    propose(rlive, project, text)
    [item] = pending(rlive, str(project))
    assert rlive.client.post(f"/v1/review/{item['item_id']}/reject").json()["status"] == "rejected"
    again = propose(rlive, project, text)  # a new session says the same thing
    assert again["refused"] and again["refused"][0]["code"] == "rejected_before", again
    assert pending(rlive, str(project)) == [] and rlive.daemon.stores.for_cwd(str(project)).all_headers() == []


def test_review_per_project(home: Path, tmp_path: Path, project: Path) -> None:
    other = tmp_path / "work" / "other"
    (other / ".git").mkdir(parents=True)
    write_config(home, f'[projects."{project}"]\nreview = true\n')
    with serve(Daemon(make_settings(home), clock=SteppingClock())) as live:
        propose(live, project, "Remember: always run the linter before committing.")
        propose(live, other, "Remember: always run the linter before committing.")
        assert len(pending(live, str(project))) == 1 and live.daemon.stores.for_cwd(str(project)).all_headers() == []
        assert pending(live, str(other)) == [] and len(live.daemon.stores.for_cwd(str(other)).all_headers()) == 1


def test_review_in_the_web_view(rlive: LiveDaemon, project: Path) -> None:
    propose(rlive, project, "Remember: always use pnpm, never npm, because the lockfile is pnpm's.")
    propose(rlive, project, "Remember: the staging database is reset every night at 02:00 UTC.")
    first, second = pending(rlive, str(project))
    browser, csrf = login(rlive)
    p = pid(rlive, project)
    page = browser.get(f"/ui/p/{p}/review").text
    assert first["item_id"] in page and second["item_id"] in page
    own = {"origin": rlive.url}
    form = {"name": "Use pnpm", "description": "pnpm only", "body": first["body"], "csrf": csrf}
    assert (
        browser.post(
            f"/ui/p/{p}/review/{first['item_id']}", data={**form, "action": "approve", "csrf": "x"}, headers=own
        ).status_code
        == 403
    )
    r = browser.post(f"/ui/p/{p}/review/{first['item_id']}", data={**form, "action": "approve"}, headers=own)
    assert r.status_code == 303, r.text
    assert [
        m.name
        for m in map(
            rlive.daemon.stores.for_cwd(str(project)).get,
            [h.filename for h in rlive.daemon.stores.for_cwd(str(project)).all_headers()],
        )
    ] == ["Use pnpm"]
    r = browser.post(
        f"/ui/p/{p}/review/{second['item_id']}", data={**form, "name": second["name"], "action": "reject"}, headers=own
    )
    assert r.status_code == 303 and pending(rlive, str(project)) == []


def test_review_cli(rlive: LiveDaemon, project: Path, home: Path) -> None:
    propose(rlive, project, "Remember: always use pnpm, never npm, because the lockfile is pnpm's.")
    env = {**daemon_env(home), "MEMORYD_PORT": rlive.url.rsplit(":", 1)[1], "MEMORYD_TOKEN": rlive.daemon.token}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memoryd", *args], env=env, capture_output=True, text=True, timeout=30, cwd=project
        )

    listed = cli("review", "list")
    assert listed.returncode == 0 and "1 memory waiting for review" in listed.stdout, listed.stderr
    item_id = json.loads(cli("review", "list", "--json").stdout)["items"][0]["item_id"]
    edited = cli("review", "edit", item_id, "--name", "pnpm everywhere")
    assert edited.returncode == 0 and "pnpm everywhere" in edited.stdout, edited.stderr
    approved = cli("review", "approve", item_id)
    assert approved.returncode == 0 and "approved" in approved.stdout
    assert cli("review", "reject", item_id).returncode == 1  # already decided
    assert "Nothing waiting" in cli("review", "list").stdout


def test_read_only_recalls_and_serves_but_never_writes(home: Path, project: Path) -> None:
    with serve(Daemon(make_settings(home), clock=SteppingClock())) as live:
        filename = save_memory(live, project, "Use pnpm", "Always use pnpm for installs")
        save_memory(live, project, "pnpm only", "Always use pnpm for installs")
        run_id = live.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"]
        live.daemon.dream.wait()
        filename = live.daemon.stores.for_cwd(str(project)).all_headers()[0].filename  # the survivor of the merge
    write_config(home, "[memory]\nread_only = true\n")
    with serve(Daemon(make_settings(home), clock=SteppingClock())) as live:
        store = live.daemon.stores.for_cwd(str(project))
        before = {p.name: p.read_bytes() for p in store.path.iterdir() if p.is_file()}
        assert recall_api(live, project, "pnpm installs")["memories"]  # still recalls
        assert filename in live.client.get("/v1/index", params={"cwd": str(project)}).json()["content"]
        r = live.client.post(
            "/v1/memories",
            json={"cwd": str(project), "name": "New", "description": "new fact", "type": "user", "body": "x"},
        )
        assert r.status_code == 409 and r.json()["error"]["code"] == "read_only"
        assert live.client.delete(f"/v1/memories/{filename}", params={"cwd": str(project)}).status_code == 409
        assert live.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["error"]["code"] == "read_only"
        assert live.client.post(f"/v1/dream/runs/{run_id}/undo").status_code == 409
        assert not list((home / "dream-runs").glob("*/undo-started"))  # nothing left for a restart to finish
        job = propose(live, project, "Remember: always run the linter before committing.")
        assert job["status"] == "skipped" and not job["memories_written"]
        browser, csrf = login(live)
        version = live.client.get(f"/v1/memories/{filename}", params={"cwd": str(project)}).json()["version"]
        r = browser.post(
            f"/ui/p/{pid(live, project)}/m/{filename}",
            data={"name": "x", "description": "y", "body": "z", "csrf": csrf, "version": version},
            headers={"origin": live.url},
        )
        assert r.status_code == 409 and "read-only" in r.text
        assert {p.name: p.read_bytes() for p in store.path.iterdir() if p.is_file()} == before
        assert csrf_of(browser.get(f"/ui/p/{pid(live, project)}").text)
