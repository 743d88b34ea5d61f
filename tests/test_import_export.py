"""`memoryd import` / `memoryd export` against a real daemon subprocess: both dialects and plain
notes come in through REST save, nothing is overwritten, and an export reads back losslessly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.servers import DaemonProcess
from tests.test_cli import run

# End-to-end (`memoryd import` and `export` as subprocesses against a running daemon):
# CI runs it after the fast suite, which stays under 2 minutes.
pytestmark = pytest.mark.e2e

CC_FILE = """---
name: debugging-notes
description: run the flaky suite with -p no:randomly first
metadata:
  type: feedback
---
Run the flaky suite with `-p no:randomly` before bisecting. See [[ci-runners]].
"""
MEMORYD_FILE = """---
name: Role
description: data scientist
type: user
---
The user is a data scientist.
"""
PLAIN_NOTE = "# Staging\n\nThe staging DB is reset every Sunday night.\n"
SECRET_FILE = (
    "---\nname: deploy key\ndescription: the key\ntype: reference\n---\nkey ghp_"
    + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5\n"
)


def _memories(daemon: DaemonProcess, project: Path) -> dict[str, dict[str, str]]:
    with daemon.client() as c:
        listed = c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
        return {
            m["filename"]: c.get(f"/v1/memories/{m['filename']}", params={"cwd": str(project)}).json() for m in listed
        }


def _content(memories: dict[str, dict[str, str]]) -> set[tuple[str, str, str, str]]:
    return {(m["name"], m["description"], m["type"], m["body"]) for m in memories.values()}


def test_import_dedupes_never_overwrites_and_dry_run_writes_nothing(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    daemon_process, home = shared_daemon, shared_daemon.home
    source = tmp_path / "old store"
    source.mkdir()
    (source / "debugging-notes.md").write_text(CC_FILE)
    (source / "user_role.md").write_text(MEMORYD_FILE)
    (source / "staging.md").write_text(PLAIN_NOTE)
    (source / "deploy.md").write_text(SECRET_FILE)
    (source / "MEMORY.md").write_text("- [Role](user_role.md) — data scientist\n")
    cwd = ["--cwd", str(project)]
    assert (
        run(
            home,
            "save",
            *cwd,
            "-t",
            "user",
            "-n",
            "Role",
            "-d",
            "data scientist",
            "-b",
            "The user is a data scientist.",
        ).returncode
        == 0
    )
    taken = run(
        home, "save", *cwd, "-t", "feedback", "-n", "debugging-notes", "-d", "ours, not theirs", "-b", "Keep this one."
    )
    assert taken.returncode == 0
    before = _memories(daemon_process, project)

    dry = run(home, "import", *cwd, "--from", str(source), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    planned = {row["source"]: row for row in json.loads(dry.stdout)["memories"]}
    assert planned["user_role.md"]["action"] == "duplicate"
    assert (
        planned["debugging-notes.md"]["action"] == "save"
        and planned["debugging-notes.md"]["name"] == "debugging-notes (imported)"
    )
    assert planned["staging.md"]["type"] == "project" and "MEMORY.md" not in planned
    assert _memories(daemon_process, project) == before  # a dry run writes nothing

    done = run(home, "import", *cwd, "--from", str(source))
    assert (
        done.returncode == 1 and "refused" in done.stdout and "aB3dE5" not in done.stdout + done.stderr
    )  # the secret file only
    after = _memories(daemon_process, project)
    for filename, memory in before.items():
        assert after[filename] == memory  # nothing that existed was touched
    by_name = {m["name"]: m for m in after.values()}
    assert (
        by_name["debugging-notes (imported)"]["type"] == "feedback"
        and "[[ci-runners]]" in by_name["debugging-notes (imported)"]["body"]
    )
    assert by_name["staging"]["description"] == "Staging" and "Sunday night" in by_name["staging"]["body"]
    assert not any("key" in m["name"] for m in after.values())

    again = json.loads(run(home, "import", *cwd, "--from", str(source), "--json").stdout)
    assert set(again["counts"]) <= {"duplicate", "refused"} and _memories(daemon_process, project) == after


def test_export_reads_back_losslessly_as_jsonl_and_tarball(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    daemon_process, home = shared_daemon, shared_daemon.home
    cwd = ["--cwd", str(project)]
    for args in (
        [
            "-t",
            "feedback",
            "-n",
            "Tests: real db",
            "-d",
            "no mocks — ever",
            "-b",
            "Use the real DB.\n\n**Why:** mocks hid a bug.",
        ],
        ["-t", "user", "-n", "Rôle", "-d", "data scientist (Zürich)", "-b", "Likes short answers."],
        ["-t", "reference", "-n", "Dashboards", "-d", "grafana.internal/d/api", "-b", "See [[alerts]]."],
    ):
        assert run(home, "save", *cwd, *args).returncode == 0
    original = _content(_memories(daemon_process, project))
    jsonl = tmp_path / "out.jsonl"
    tarball = tmp_path / "out.tar.gz"
    assert run(home, "export", *cwd, "-o", str(jsonl)).returncode == 0
    assert run(home, "export", *cwd, "--format", "tar", "-o", str(tarball)).returncode == 0
    assert len(jsonl.read_text().splitlines()) == 3
    for n, exported in enumerate((jsonl, tarball)):
        other = tmp_path / f"other-{n}"
        (other / ".git").mkdir(parents=True)
        r = run(home, "import", "--cwd", str(other), "--from", str(exported), "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["counts"] == {"saved": 3}, r.stdout + r.stderr
        assert _content(_memories(daemon_process, other)) == original


def test_import_refuses_a_whole_store_and_names_the_fix(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    home = shared_daemon.home
    (tmp_path / "old" / "projects" / "-x" / "memory").mkdir(parents=True)
    r = run(home, "import", "--cwd", str(project), "--from", str(tmp_path / "old"))
    assert r.returncode != 0 and "projects/<project>/memory" in r.stderr
    r = run(home, "import", "--cwd", str(project), "--from", str(tmp_path / "missing.jsonl"))
    assert r.returncode != 0 and "no such file" in r.stderr
