"""End to end through real HTTP: save, list, get, index, delete."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LiveDaemon
from tests.support.servers import loopback_request


@pytest.fixture
def live(module_live: LiveDaemon) -> LiveDaemon:
    """Each test keeps to its own project: one daemon for the module."""
    return module_live


def test_crud_roundtrip(live: LiveDaemon, project: Path) -> None:
    c = live.client
    r = c.post(
        "/v1/memories",
        json={
            "cwd": str(project),
            "name": "Testing: real DB",
            "description": "Use the real database in tests",
            "type": "feedback",
            "body": "No mocks.\n\n**Why:** burned.\n**How to apply:** start the db.",
        },
    )
    assert r.status_code == 201, r.text
    filename = r.json()["filename"]
    assert filename == "feedback_testing-real-db.md"
    r2 = c.post(
        "/v1/memories",
        json={
            "cwd": str(project),
            "name": "Testing: real DB",
            "description": "Use the real DB",
            "type": "feedback",
            "body": "v2",
        },
    )
    assert r2.status_code == 200 and r2.json()["filename"] == filename
    listed = c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
    assert [m["filename"] for m in listed] == [filename]
    got = c.get(f"/v1/memories/{filename}", params={"cwd": str(project)}).json()
    assert got["name"] == "Testing: real DB" and got["body"] == "v2"
    index = c.get("/v1/index", params={"cwd": str(project)}).json()
    assert index["content"] == f"- [Testing: real DB]({filename}) — Use the real DB\n"
    assert c.get("/v1/prompt", params={"cwd": str(project)}).json()["text"].count(filename) == 1
    assert c.delete(f"/v1/memories/{filename}", params={"cwd": str(project)}).status_code == 204
    assert c.get(f"/v1/memories/{filename}", params={"cwd": str(project)}).status_code == 404


def test_token_required(live: LiveDaemon, project: Path) -> None:
    assert loopback_request("GET", live.url + "/v1/health").status_code == 200
    r = loopback_request("GET", live.url + "/v1/memories", params={"cwd": str(project)})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
