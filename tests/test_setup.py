"""`memoryd setup` without Claude Code's CLI on PATH: settings-file hooks, a dry run that changes
nothing, a second run that changes nothing, and a doctor summary. Real subprocesses, fresh HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memoryd.cli.output import EXIT_CODES
from memoryd.cli.schemas import schema_for
from tests.support.servers import DaemonProcess, free_socket

# Drives the daemon and the CLI as subprocesses: the end-to-end suite (docs/development.md).
pytestmark = pytest.mark.e2e


def free_port() -> int:
    with free_socket() as sock:
        return int(sock.getsockname()[1])


def setup(env: dict[str, str], project: Path, *args: str) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "memoryd", "setup", "--json", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(run.stdout)
    jsonschema.validate(data, schema_for("setup", EXIT_CODES))
    doctor_ok = data["doctor"] is None or data["doctor"]["ok"]
    assert run.returncode == (0 if doctor_ok else 1), run.stdout + run.stderr  # a failed check fails setup (#39)
    return data  # type: ignore[no-any-return]


def test_setup_connects_claude_code_with_hooks_once(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    # No `claude` on PATH, no user service manager reachable (so the machine's real one is never touched).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORYD_", "CLAUDE", "XDG_RUNTIME_DIR", "DBUS_SESSION"))
    }
    env |= {"HOME": str(user_home), "MEMORYD_HOME": str(shared_daemon.home), "PATH": "/usr/bin:/bin"}
    settings = user_home / ".claude" / "settings.json"

    dry = setup(env, project, "--dry-run", "--mcp", "cursor")
    actions = {s["step"]: s for s in dry["steps"]}
    assert actions["claude code"]["action"] == "would" and "`claude` is not on PATH" in actions["claude code"]["detail"]
    assert (
        actions["service"]["action"] == "already" and "runs without a service" in actions["service"]["detail"]
    )  # no manager, the daemon runs: it says so
    assert '"mcpServers"' in actions["mcp cursor"]["detail"] and dry["doctor"] is None
    assert not settings.exists()  # a dry run changes nothing

    done = setup(env, project)
    assert {s["step"]: s["action"] for s in done["steps"]}["claude code"] == "done"
    hooks = json.loads(settings.read_text())["hooks"]
    assert f"MEMORYD_HOME={shared_daemon.home}" in json.dumps(hooks["SessionStart"]) and "curl" not in json.dumps(hooks)
    checks_failed = {c["name"] for c in done["doctor"]["failed"]}
    assert not checks_failed & {"daemon", "token", "claude-code hooks (user)", "context"}, done["doctor"]

    before = settings.read_text()
    again = setup(env, project)
    assert {s["step"]: s["action"] for s in again["steps"]}[
        "claude code"
    ] == "already" and settings.read_text() == before


def test_setup_without_a_service_manager_starts_the_daemon_and_fails_on_failed_checks(
    tmp_path: Path, project: Path
) -> None:
    """#39: in a container (no systemd --user) setup said "run memoryd serve" and exited 0 with 4 checks failed.
    Now it starts the daemon in the background, writes no unit, and exits 1 while a check still fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n")
    (bin_dir / "systemctl").chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORYD_", "CLAUDE", "XDG_RUNTIME_DIR", "DBUS_SESSION"))
    }
    home = tmp_path / "home"
    env |= {"HOME": str(tmp_path / "user"), "MEMORYD_HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    env |= {"MEMORYD_PORT": str(free_port()), "MEMORYD_RECALL_DENSE": "off"}
    dry = subprocess.run(
        [sys.executable, "-m", "memoryd", "setup", "--no-claude-code", "--dry-run", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    step = json.loads(dry.stdout)["steps"][0]
    assert dry.returncode == 0 and step["action"] == "would" and "in the background" in step["detail"], dry.stdout
    assert not home.exists()  # a dry run starts nothing
    try:
        run = subprocess.run(
            [sys.executable, "-m", "memoryd", "setup", "--no-claude-code"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "no systemd user manager answers" in run.stdout and "started the daemon in the background" in run.stdout
        assert "FAIL daemon" not in run.stdout and "FAIL service" not in run.stdout, run.stdout
        assert run.returncode == 1 and "FAIL claude-code hooks" in run.stdout  # Claude Code left alone: a check fails
        status = subprocess.run(
            [sys.executable, "-m", "memoryd", "status", "--json"], env=env, capture_output=True, text=True, timeout=60
        )
        assert status.returncode == 0 and json.loads(status.stdout)["home"] == str(home)
        assert (
            not (tmp_path / "user" / ".config").exists() and not (home / "config.toml").exists()
        )  # no unit, no config
    finally:
        stop = subprocess.run([sys.executable, "-m", "memoryd", "stop"], env=env, capture_output=True, timeout=60)
    assert stop.returncode == 0, stop.stderr


def test_dry_run_with_claude_on_path_says_the_plugin_brings_the_mcp_server(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    user_home, bin_dir = tmp_path / "user", tmp_path / "bin"
    user_home.mkdir()
    bin_dir.mkdir()
    ran = tmp_path / "claude-ran"
    claude = bin_dir / "claude"  # a dry run must not run it: it leaves a trace and fails if it is run
    claude.write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n", encoding="utf-8")
    claude.chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORYD_", "CLAUDE", "XDG_RUNTIME_DIR", "DBUS_SESSION"))
    }
    env |= {"HOME": str(user_home), "MEMORYD_HOME": str(shared_daemon.home), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    dry = setup(env, project, "--dry-run")
    step = {s["step"]: s for s in dry["steps"]}["claude code"]
    assert step["action"] == "would" and "plugin" in step["detail"], step
    assert "MCP server (`memoryd mcp`)" in step["detail"] and f"{claude} plugin install" in step["detail"], step
    assert not ran.exists() and not (user_home / ".claude").exists()  # nothing ran, nothing changed
