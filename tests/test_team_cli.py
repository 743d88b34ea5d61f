"""Team memory end to end: two members, each a real `memoryd serve` subprocess with their own HOME
(their git identity) and MEMORYD_HOME, driven by the `memoryd` command; a bare repository on
local disk is the remote."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import DaemonProcess, daemon_env

pytestmark = pytest.mark.e2e


class Person:
    def __init__(self, root: Path, name: str) -> None:
        self.home = root / name / "home"
        self.memoryd_home = self.home / ".memoryd"
        self.project = root / name / "project"
        (self.project / ".git").mkdir(parents=True)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / ".gitconfig").write_text(
            f"[user]\n\tname = {name.title()} Example\n\temail = {name}@example.com\n"
        )
        self.env = daemon_env(self.memoryd_home, HOME=str(self.home))
        self.daemon = DaemonProcess(home=self.memoryd_home, env=self.env)

    def run(self, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "memoryd", *args],
            env=self.env,
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == code, (done.stdout, done.stderr)
        return done


@pytest.fixture
def people(tmp_path: Path) -> Iterator[tuple[Person, Person]]:
    alice, bob = Person(tmp_path, "alice"), Person(tmp_path, "bob")
    try:
        alice.daemon.start()
        bob.daemon.start()
        yield alice, bob
    finally:
        alice.daemon.kill()
        bob.daemon.kill()


def test_two_members_share_memory_through_the_command_line(people: tuple[Person, Person], tmp_path: Path) -> None:
    alice, bob = people
    remote = tmp_path / "team-memory.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)

    r = alice.run("team", "init", "--remote", str(remote))
    assert "branch memory" in r.stdout and "signed as Alice Example" in r.stdout
    r = alice.run(
        "save",
        "--team",
        "-t",
        "project",
        "-n",
        "Deploy day",
        "-d",
        "We deploy production on Tuesdays",
        "-b",
        "Tuesday mornings only.",
    )
    assert "saved project_deploy-day.md" in r.stdout and "/team/" in r.stdout
    r = alice.run("team", "sync")
    assert "pushed: project_deploy-day.md" in r.stdout

    r = bob.run("team", "init", "--remote", str(remote), "--json")
    assert json.loads(r.stdout)["sync"]["pulled"] == ["project_deploy-day.md"]
    recalled = json.loads(bob.run("recall", "which day do we deploy production", "--json").stdout)["memories"]
    assert [(m["filename"], m["origin"], m["author"]) for m in recalled] == [
        ("project_deploy-day.md", "team", "Alice Example")
    ]
    assert "(by Alice Example)" in bob.run("team", "list").stdout
    log = subprocess.run(
        ["git", "--git-dir", str(remote), "log", "--format=%an <%ae>", "memory"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert log.strip() == "Alice Example <alice@example.com>"

    # bob deletes it; alice's next sync removes it
    bob.run("forget", "--team", "project_deploy-day.md")
    bob.run("team", "sync")
    r = alice.run("team", "sync")
    assert "deleted by a member: project_deploy-day.md" in r.stdout
    assert not list((alice.memoryd_home / "projects").glob("*/memory/team/project_*.md"))
