"""#39 item 11: memories that follow the user across projects (`save --global`, `"scope": "global"`),
over real HTTP: kept in $MEMORYD_HOME/global/, listed and recalled in every project, marked global,
edited and forgotten like any other, never in a project's or team's folder."""

from __future__ import annotations

from pathlib import Path

from memoryd.base import limits
from tests.conftest import LiveDaemon

ME = {
    "name": "How I like to work",
    "description": "The user wants short answers and type-checked Python with mypy strict",
    "type": "user",
    "body": "Short answers; Python type-checked with mypy --strict.",
}


def test_a_global_memory_follows_the_user_into_every_project(live: LiveDaemon, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "other-project"
    (other / ".git").mkdir(parents=True)
    r = live.client.post("/v1/memories", json={"cwd": str(project), **ME, "scope": "global"})
    assert r.status_code == 201, r.text
    filename = r.json()["filename"]
    home = live.daemon.settings.home
    assert Path(r.json()["path"]).parent == home / limits.GLOBAL_DIRNAME
    for cwd in (project, other):  # in no project's own store, in every project's global list
        assert live.client.get("/v1/memories", params={"cwd": str(cwd)}).json()["memories"] == []
        listed = live.client.get("/v1/memories", params={"cwd": str(cwd), "scope": "global"}).json()["memories"]
        assert [m["filename"] for m in listed] == [filename]
    recalled = live.client.post(
        "/v1/recall",
        json={
            "cwd": str(other),
            "query": "how should I check the types in this Python code?",
            "session_id": "s-global",
        },
    ).json()
    [memory] = recalled["memories"]
    assert memory["filename"] == filename and memory["origin"] == "global", recalled
    assert (
        "Global memory (yours, in every project)." in recalled["injection"] and "mypy --strict" in recalled["injection"]
    )
    # edited like any other: the same type+name updates it, from any project
    r = live.client.post("/v1/memories", json={"cwd": str(other), **ME, "body": "Short answers.", "scope": "global"})
    assert r.status_code == 200 and r.json()["filename"] == filename
    got = live.client.get(f"/v1/memories/{filename}", params={"cwd": str(project), "scope": "global"}).json()
    assert got["body"] == "Short answers."
    assert not (live.daemon.stores.for_cwd(str(project)).path / limits.TEAM_DIRNAME / filename).exists()
    # forgotten like any other
    r = live.client.delete(f"/v1/memories/{filename}", params={"cwd": str(other), "scope": "global"})
    assert r.status_code == 204
    assert live.client.get("/v1/memories", params={"cwd": str(project), "scope": "global"}).json()["memories"] == []


def test_an_unknown_scope_is_refused_naming_the_field(live: LiveDaemon, project: Path) -> None:
    r = live.client.post("/v1/memories", json={"cwd": str(project), **ME, "scope": "everywhere"})
    assert r.status_code in (400, 422) and "scope" in r.text, r.text
    assert live.client.get("/v1/memories", params={"cwd": str(project), "scope": "global"}).json()["memories"] == []
