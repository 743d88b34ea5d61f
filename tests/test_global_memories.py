"""#39 item 11: memories that follow the user across projects (`save --global`, `"scope": "global"`),
over real HTTP: kept in $MEMORYD_HOME/global/, listed and recalled in every project, marked global,
edited and forgotten like any other, never in a project's or team's folder."""

from __future__ import annotations

import json
from pathlib import Path

from memoryd.base import limits
from tests.conftest import LiveDaemon
from tests.support.servers import DaemonProcess
from tests.test_cli import run

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
    again = live.client.post(
        "/v1/recall",
        json={"cwd": str(project), "query": "how should I check the types in this Python code?", "session_id": "s-2"},
    ).json()
    assert [m["content"] for m in again["memories"]] == ["Short answers."], again
    assert not (live.daemon.stores.for_cwd(str(project)).path / limits.TEAM_DIRNAME / filename).exists()
    # forgotten like any other
    r = live.client.delete(f"/v1/memories/{filename}", params={"cwd": str(other), "scope": "global"})
    assert r.status_code == 204
    assert live.client.get("/v1/memories", params={"cwd": str(project), "scope": "global"}).json()["memories"] == []


def test_an_unknown_scope_is_refused_naming_the_field(live: LiveDaemon, project: Path) -> None:
    r = live.client.post("/v1/memories", json={"cwd": str(project), **ME, "scope": "everywhere"})
    assert r.status_code in (400, 422) and "scope" in r.text, r.text
    assert live.client.get("/v1/memories", params={"cwd": str(project), "scope": "global"}).json()["memories"] == []


def test_the_cli_saves_lists_shows_and_forgets_a_global_memory(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    home = shared_daemon.home
    other = tmp_path / "other-project"
    (other / ".git").mkdir(parents=True)
    r = run(
        home,
        "save",
        "--cwd",
        str(project),
        "--global",
        "-t",
        "user",
        "-n",
        "Editor",
        "-d",
        "Uses Helix",
        "-b",
        "Helix.",
    )
    assert r.returncode == 0 and "saved user_editor.md" in r.stdout, r.stderr
    try:
        r = run(home, "save", "--cwd", str(other), "-t", "project", "-n", "Deploys", "-d", "Tuesdays", "-b", "Tue.")
        assert r.returncode == 0, r.stderr
        r = run(home, "list", "--cwd", str(other))  # the project's own, then the global ones, marked
        assert r.returncode == 0 and "2 memories" in r.stdout and "user (global)" in r.stdout, r.stdout
        assert "project (global)" not in r.stdout
        listed = json.loads(run(home, "list", "--cwd", str(other), "--global", "--json").stdout)
        assert [m["filename"] for m in listed["memories"]] == ["user_editor.md"]
        assert [
            m["filename"] for m in json.loads(run(home, "list", "--cwd", str(other), "--json").stdout)["memories"]
        ] == ["project_deploys.md"]
        r = run(home, "show", "--cwd", str(other), "--global", "user_editor.md")
        assert r.returncode == 0 and "Helix." in r.stdout
        r = run(home, "show", "--cwd", str(other), "user_editor.md")  # as `list` showed it: found, marked global
        assert r.returncode == 0 and "[user, global]" in r.stdout and "Helix." in r.stdout, r.stderr
        r = run(home, "forget", "--cwd", str(other), "user_editor.md")  # never deleted everywhere without --global
        assert r.returncode == 1 and "forget --global user_editor.md" in r.stderr, r.stderr
        r = run(home, "save", "--cwd", str(other), "--global", "--team", "-t", "user", "-n", "x", "-d", "y", "-b", "z")
        assert r.returncode == 2 and "never shared" in r.stderr
    finally:
        r = run(home, "forget", "--cwd", str(other), "--global", "user_editor.md")
    assert r.returncode == 0 and "forgot user_editor.md" in r.stdout
    assert json.loads(run(home, "list", "--cwd", str(project), "--global", "--json").stdout)["memories"] == []


def test_mcp_tools_take_the_global_scope(live: LiveDaemon, project: Path) -> None:
    """Over the daemon's /mcp (real HTTP): memory_save, memory_search, memory_show and memory_forget with scope."""
    import anyio

    from tests.test_mcp import data, http_client, roots_of

    async def scenario() -> None:
        async with http_client(live.url, live.daemon.token, list_roots_callback=roots_of(project)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("memory_save", "memory_search", "memory_show", "memory_forget"):
                assert tools[name].input_schema["properties"]["scope"]["enum"] == ["project", "global"], name
            saved = data(await client.call_tool("memory_save", {**ME, "scope": "global"}))
            assert Path(saved["path"]).parent == live.daemon.settings.home / limits.GLOBAL_DIRNAME
            found = data(await client.call_tool("memory_search", {"scope": "global"}))
            assert [m["filename"] for m in found["memories"]] == [saved["filename"]]
            assert data(await client.call_tool("memory_search", {}))["memories"] == []
            recalled = data(await client.call_tool("memory_recall", {"query": "how should I check the Python types?"}))
            assert [(m["filename"], m.get("origin")) for m in recalled["memories"]] == [(saved["filename"], "global")]
            shown = data(await client.call_tool("memory_show", {"filename": saved["filename"], "scope": "global"}))
            assert shown["body"] == ME["body"]
            data(await client.call_tool("memory_forget", {"filename": saved["filename"], "scope": "global"}))
            assert data(await client.call_tool("memory_search", {"scope": "global"}))["memories"] == []

    anyio.run(scenario)
