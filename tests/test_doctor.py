"""`memoryd doctor` (a real subprocess) against a real daemon (served in the test's process): it fails
on each broken link (daemon down, hooks pointing elsewhere or with a stale token, a root not watched,
a service that is not the daemon answering, a bad rg path), prints the fix, exits 1; and passes when
all is well."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serve_env
from tests.support.servers import daemon_env

# Drives the daemon and the CLI as subprocesses: the end-to-end suite (docs/development.md).
pytestmark = pytest.mark.e2e


def doctor(env: dict[str, str], cwd: Path) -> tuple[int, dict[str, Any]]:
    run = subprocess.run(
        [sys.executable, "-m", "memoryd", "doctor", "--json", "--cwd", str(cwd)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return run.returncode, json.loads(run.stdout)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def failing(report: dict[str, Any]) -> set[str]:
    return {c["name"] for c in report["checks"] if not c["ok"]}


def fake_systemctl(tmp_path: Path, answer: str, exit_code: int = 0) -> str:
    """A `systemctl` on PATH that answers `show` with these properties (the user manager's words)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "systemctl"
    script.write_text(f"#!/bin/sh\nprintf '{answer}'\nexit {exit_code}\n")
    script.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def test_doctor_fails_on_each_broken_link_then_passes(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_home = tmp_path / "user"
    roots = user_home / ".claude" / "projects"
    roots.mkdir(parents=True)
    config = home / "config.toml"
    config.write_text(f'[transcripts]\nroots = ["{roots}"]\n')
    env = daemon_env(home, HOME=str(user_home), MEMORYD_PORT="1")
    # A user service manager that answers: the fix is the service.
    code, report = doctor(env | {"PATH": fake_systemctl(tmp_path / "up", "")}, project)
    checks = by_name(report)
    assert code == 1 and not report["ok"]
    assert not checks["daemon"]["ok"] and "memoryd install-service" in checks["daemon"]["fix"]
    assert not checks["service"]["ok"] and checks["service"]["fix"].startswith("memoryd install-service")
    # None (a container, WSL): the fix is a command that works here (#39), never install-service.
    code, report = doctor(env | {"PATH": fake_systemctl(tmp_path / "down", "Failed to connect to bus", 1)}, project)
    checks = by_name(report)
    for name in ("daemon", "service"):
        assert "memoryd setup" in checks[name]["fix"] and "install-service" not in checks[name]["fix"], checks[name]
    assert not checks["claude-code hooks"]["ok"] and "memoryd hooks --install" in checks["claude-code hooks"]["fix"]
    assert not checks["transcript roots"]["ok"] and "does not answer" in checks["transcript roots"]["detail"]
    monkeypatch.setenv("HOME", str(user_home))  # the daemon, served in this process, sees the HOME the CLI runs get
    with serve_env(daemon_env(home, HOME=str(user_home))) as (daemon, env):
        subprocess.run(
            [sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, check=True, capture_output=True
        )
        code, report = doctor(env, project)
        assert code == 0 and report["ok"], [c for c in report["checks"] if not c["ok"]]
        checks = by_name(report)
        assert checks["token"]["detail"].endswith("mode 600") and "→" in checks["memory dir"]["detail"]
        assert checks["grep"]["detail"].startswith("ripgrep: ") and "ripgrep 14.1.0" in checks["grep"]["detail"]
        assert checks[f"transcript root {roots}"]["detail"] == "watched"
        assert "runs without one" in checks["service"]["detail"]
        assert checks["recall"]["detail"].startswith(
            "recall ranks by word match only (no local meaning model: off"
        )  # daemon_env turns the embedding model off
        assert daemon.url in checks["claude-code hooks (user)"]["detail"]
        assert "proves" in checks["claude-code hooks (user)"]["detail"]

        # Links of different checks broken at once (each check reads only its own link, so each run of
        # doctor names every one; ~0.5 s a run): the hooks' port changed by hand to one nobody listens
        # on, a root added to config.toml after the daemon started, a bad rg path, and a service
        # installed whose manager does not answer (it must be active and be the daemon that answers).
        settings = user_home / ".claude" / "settings.json"
        good = settings.read_text()
        settings.write_text(good.replace(f"MEMORYD_HOME={home}", f"MEMORYD_HOME={tmp_path / 'other-home'}"))
        later = tmp_path / "later-root"
        later.mkdir()
        config.write_text(f'[transcripts]\nroots = ["{roots}", "{later}"]\nripgrep = "{tmp_path / "no-rg"}"\n')
        unit = user_home / ".config" / "systemd" / "user" / "memoryd.service"
        unit.parent.mkdir(parents=True)
        unit.write_text("[Unit]\n")
        code, report = doctor(
            {**env, "PATH": fake_systemctl(tmp_path, "Failed to connect to bus: No medium found", exit_code=1)}, project
        )
        checks = by_name(report)
        assert code == 1 and failing(report) == {
            "claude-code hooks (user)",
            f"transcript root {later}",
            "grep",
            "service",
        }, failing(report)
        hooks = checks["claude-code hooks (user)"]
        assert "other-home" in hooks["detail"] and "memoryd hooks --install" in hooks["fix"]
        root = checks[f"transcript root {later}"]
        assert "not a root of the running daemon" in root["detail"] and "restart" in root["fix"]
        grep = checks["grep"]
        assert "not an executable file" in grep["detail"] and '"auto"' in grep["fix"]
        service = checks["service"]
        assert (
            "state is unknown" in service["detail"]
            and "No medium found" in service["detail"]
            and "enable-linger" in service["fix"]
        )

        # The rest put back; the hooks' token file holds another token, and the service is not running.
        # (an older install's curl hook: it would send the token to the port unproved)
        curl = "curl -sS -H @'/h' --data-binary @- " + daemon.url + "/v1/hooks/claude-code"
        settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": curl}]}]}}))
        config.write_text(f'[transcripts]\nroots = ["{roots}"]\n')
        code, report = doctor({**env, "PATH": fake_systemctl(tmp_path, "ActiveState=inactive\\nMainPID=0\\n")}, project)
        hooks, service = by_name(report)["claude-code hooks (user)"], by_name(report)["service"]
        assert code == 1 and failing(report) == {"claude-code hooks (user)", "service"}, failing(report)
        assert "unproved" in hooks["detail"] and "memoryd hooks --install" in hooks["fix"]
        assert "not running" in service["detail"] and "systemctl --user restart memoryd" in service["fix"]
        subprocess.run(
            [sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, check=True, capture_output=True
        )

        # The service runs, but another process answers; then it is the daemon answering (pid: this process's).
        for answer, ok, words in [
            ("ActiveState=active\\nMainPID=1\\n", False, f"pid {os.getpid()} answers"),
            (f"ActiveState=active\\nMainPID={os.getpid()}\\n", True, "is the daemon answering"),
        ]:
            code, report = doctor({**env, "PATH": fake_systemctl(tmp_path, answer)}, project)
            service = by_name(report)["service"]
            assert (code == 0) is ok and service["ok"] is ok and words in service["detail"], service
            assert ok or "systemctl --user restart memoryd" in service["fix"]
