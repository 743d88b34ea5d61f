"""The `memoryd` command against a real daemon subprocess, and with the daemon down."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import DaemonProcess, daemon_env

# Drives the daemon and the CLI as subprocesses: the end-to-end suite (docs/development.md).
pytestmark = pytest.mark.e2e


def run(home: Path, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        env=daemon_env(home, **env),
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_against_daemon(shared_daemon: DaemonProcess, project: Path) -> None:
    home = shared_daemon.home
    cwd = ["--cwd", str(project)]
    r = run(home, "save", *cwd, "-t", "feedback", "-n", "Tests: real db", "-d", "no mocks", "-b", "Use the real DB.")
    assert r.returncode == 0 and "saved feedback_tests-real-db.md" in r.stdout, r.stderr
    r = run(home, "save", *cwd, "--json", "-t", "user", "-n", "Role", "-d", "data scientist", stdin="piped body\n")
    assert r.returncode == 0 and json.loads(r.stdout)["filename"] == "user_role.md"
    r = run(home, "list", *cwd)
    assert r.returncode == 0 and "2 memories" in r.stdout and "feedback_tests-real-db.md" in r.stdout
    listed = json.loads(run(home, "list", *cwd, "--json").stdout)
    assert {m["filename"] for m in listed["memories"]} == {"feedback_tests-real-db.md", "user_role.md"}
    r = run(home, "show", *cwd, "user_role.md")
    assert r.returncode == 0 and "piped body" in r.stdout
    assert json.loads(run(home, "show", *cwd, "--json", "user_role.md").stdout)["body"] == "piped body"
    r = run(home, "index", *cwd)
    assert r.returncode == 0 and "[Role](user_role.md)" in r.stdout
    assert "[Role](user_role.md)" in json.loads(run(home, "index", *cwd, "--json").stdout)["content"]
    r = run(home, "prompt", *cwd)
    assert r.returncode == 0 and "user_role.md" in r.stdout
    assert "user_role.md" in json.loads(run(home, "prompt", *cwd, "--json").stdout)["text"]
    r = run(home, "status")
    assert r.returncode == 0 and "running" in r.stdout and "mode:" in r.stdout
    assert json.loads(run(home, "status", "--json").stdout)["mode"] == "offline"
    r = run(home, "forget", *cwd, "user_role.md")
    assert r.returncode == 0
    r = run(home, "show", *cwd, "user_role.md")
    assert r.returncode == 1 and "memoryd list" in r.stderr
    r = run(
        home,
        "save",
        *cwd,
        "-t",
        "user",
        "-n",
        "k",
        "-d",
        "d",
        "-b",
        "key ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5",
    )
    assert r.returncode == 1 and "GitHub token" in r.stderr and "aB3dE5" not in r.stderr
    r = run(home, "show", *cwd, "../etc.md")
    assert r.returncode == 1 and "<type>_<slug>.md" in r.stderr


def test_show_and_forget_take_the_name_the_stem_or_the_file_name(shared_daemon: DaemonProcess, project: Path) -> None:
    """#39: the README's `-n "Package manager"` is found again by that name, its slug or its file name."""
    home, cwd = shared_daemon.home, ["--cwd", str(project)]
    save = ("save", *cwd, "-t", "feedback", "-n", "Package manager", "-d", "Use pnpm, never npm", "-b", "pnpm only")
    assert run(home, *save).returncode == 0
    for given in ("Package manager", "package MANAGER", "package-manager", "feedback_package-manager"):
        r = run(home, "show", *cwd, given)
        assert r.returncode == 0 and r.stdout.startswith("# Package manager  [feedback]"), (given, r.stderr)
    r = run(home, "show", *cwd, "Pakage manager")  # a typo: the close name is suggested, in CLI words
    assert r.returncode == 1 and "Did you mean feedback_package-manager.md (Package manager)?" in r.stderr
    assert "/v1/" not in r.stderr
    assert run(home, "save", *cwd, "-t", "user", "-n", "Package manager", "-d", "pnpm", "-b", "b").returncode == 0
    r = run(home, "forget", *cwd, "--json", "package manager")  # two memories answer: both are named, none deleted
    error = json.loads(r.stdout)["error"]
    assert r.returncode == 1 and error["code"] == "ambiguous_memory"
    assert "feedback_package-manager.md" in error["message"] and "user_package-manager.md" in error["message"]
    r = run(home, "forget", *cwd, "--json", "user_package-manager")
    assert r.returncode == 0 and json.loads(r.stdout) == {"deleted": "user_package-manager.md"}
    assert 'example:\n  memoryd show "Package manager"' in run(home, "show", "--help").stdout


def test_show_finds_a_claude_code_memory_by_the_title_it_was_saved_with(
    shared_daemon: DaemonProcess, project: Path
) -> None:
    """In Claude Code's dialect the file is `package-manager.md` and the name its kebab slug: the title still finds
    it."""
    home, cwd = shared_daemon.home, ["--cwd", str(project)]
    memory_dir = Path(json.loads(run(home, "index", *cwd, "--json").stdout)["memory_dir"])
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / "ci-setup.md").write_text(
        "---\nname: ci-setup\ndescription: CI runs on GitHub Actions\nmetadata:\n  type: project\n---\nGHA.\n"
    )
    r = run(home, "save", *cwd, "-t", "feedback", "-n", "Package manager", "-d", "Use pnpm", "-b", "pnpm only")
    assert r.returncode == 0 and "saved package-manager.md" in r.stdout, r.stdout + r.stderr
    for given in ("Package manager", "package-manager", "package-manager.md"):
        r = run(home, "show", *cwd, given)
        assert r.returncode == 0 and "pnpm only" in r.stdout, (given, r.stderr)


def test_stop_ends_the_daemon_cleanly(daemon_process: DaemonProcess, home: Path) -> None:
    daemon_process.start()
    r = run(home, "stop")
    assert r.returncode == 0 and "stopped memoryd" in r.stdout, r.stderr
    assert daemon_process.proc is not None and daemon_process.proc.wait(timeout=10) == 0
    assert not (home / "daemon.json").exists()
    r = run(home, "stop")
    assert r.returncode == 3 and "not running" in r.stderr and r.stdout == ""


@pytest.mark.parametrize(
    "command", [["status"], ["list"], ["save", "-t", "user", "-n", "n", "-d", "d", "-b", "b"], ["index"]]
)
def test_cli_daemon_down(home: Path, project: Path, command: list[str]) -> None:
    args = [*command] if command == ["status"] else [*command, "--cwd", str(project)]
    r = run(home, *args, MEMORYD_PORT="1")
    assert r.returncode == 3
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "memoryd serve" in lines[0]


def test_tables_and_colour_on_a_terminal_plain_when_piped(home: Path, project: Path) -> None:
    import os
    import pty

    env = daemon_env(home, MEMORYD_PORT="1", TERM="xterm-256color", COLUMNS="120")
    env.pop("NO_COLOR", None)
    cmd = [sys.executable, "-m", "memoryd", "doctor", "--cwd", str(project)]
    leader, follower = pty.openpty()
    proc = subprocess.Popen(cmd, env=env, stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=60) == 1
    on_terminal = b"".join(chunks).decode()
    assert "\x1b[" in on_terminal and "FAIL" in on_terminal and "check" in on_terminal  # coloured, with a header row
    piped = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert (
        piped.returncode == 1
        and "\x1b" not in piped.stdout
        and piped.stdout.startswith("FAIL  daemon: nothing answers")
    )
