"""`memoryd install-service` / `uninstall-service`: the unit files validated (systemd-analyze,
plistlib), settings carried through config.toml, secrets kept out of the unit, and the service
manager really called (a recording `systemctl` on PATH stands in for the user manager)."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.config import Settings
from memoryd.config_sources import load_settings
from memoryd.service.units import install_service, launchd_plist, systemd_unit
from tests.support.servers import daemon_env

ROOT = Path(__file__).resolve().parents[1]


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        env=daemon_env(home, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def fake_manager(tmp_path: Path, name: str, exit_code: int = 0) -> tuple[str, Path]:
    """A `name` on PATH that records its arguments and exits with exit_code; returns (PATH, log)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / f"{name}.log"
    script = bin_dir / name
    script.write_text(
        f"#!/bin/sh\necho \"$@\" >> '{log}'\n"
        + ("echo 'Failed to connect to bus: No medium found' >&2\n" if exit_code else "")
        + f"exit {exit_code}\n"
    )
    script.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}", log


def systemd_verify(unit: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path)}
    return subprocess.run(
        ["systemd-analyze", "--user", "verify", str(unit)], env=env, capture_output=True, text=True, timeout=60
    )


def test_systemd_unit_is_a_correct_user_unit(tmp_path: Path) -> None:
    home = tmp_path / "odd home & 'quotes' \"x\" 100%"
    text = systemd_unit(Settings(home=home))
    assert "After=default.target" not in text and "WantedBy=default.target" in text  # no ordering loop
    for needs_namespaces in ("PrivateTmp", "ProtectSystem", "ProtectHome", "PrivateDevices", "PrivateUsers"):
        assert needs_namespaces not in text
    assert "ANTHROPIC_API_KEY=" not in text and "EnvironmentFile=-" in text and "Restart=on-failure" in text
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    unit = tmp_path / "memoryd.service"
    unit.write_text(text)
    verified = systemd_verify(unit, tmp_path)
    assert verified.returncode == 0, verified.stderr
    broken = tmp_path / "broken.service"
    broken.write_text(text.replace(f"ExecStart={sys.executable}", "ExecStart=/nonexistent/python"))
    assert systemd_verify(broken, tmp_path).returncode != 0  # the check can fail


def test_shipped_systemd_unit_verifies(tmp_path: Path) -> None:
    text = (ROOT / "systemd" / "memoryd.service").read_text()
    settings_lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert "After=default.target" not in settings_lines and not any(
        line.startswith("PrivateTmp") for line in settings_lines
    )
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    unit = tmp_path / "memoryd.service"
    # The shipped file starts ~/.local/bin/memoryd; verify it with this install's python instead.
    unit.write_text(text.replace("%h/.local/bin/memoryd serve", f"{sys.executable} -m memoryd serve"))
    verified = systemd_verify(unit, tmp_path)
    assert verified.returncode == 0, verified.stderr


def test_launchd_plist_is_escaped_and_parses(tmp_path: Path) -> None:
    home = tmp_path / 'a & b <c> "d"'
    plist = plistlib.loads(launchd_plist(Settings(home=home)).encode())
    assert plist["Label"] == "dev.memoryd.daemon" and plist["RunAtLoad"] is True
    assert plist["EnvironmentVariables"] == {"MEMORYD_HOME": str(home)}
    assert plist["ProgramArguments"][-3:] == ["-m", "memoryd", "serve"] and plist["ProgramArguments"][3] == str(
        home / "service.env"
    )
    assert plist["StandardErrorPath"] == str(home / "logs" / "memoryd.launchd.log")
    for shipped in (ROOT / "launchd").glob("*.plist"):
        assert plistlib.loads(shipped.read_bytes())["Label"] == "dev.memoryd.daemon"


def test_launchd_install_bootstraps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, log = fake_manager(tmp_path, "launchctl")
    monkeypatch.setenv("PATH", path)
    settings = Settings(home=tmp_path / "mh")
    result = install_service(settings, system="Darwin", user_home=tmp_path / "user", env={})
    written = Path(result["path"])
    assert (
        written.name == "dev.memoryd.daemon.plist"
        and plistlib.loads(written.read_bytes())["Label"] == "dev.memoryd.daemon"
    )
    calls = log.read_text().splitlines()
    assert calls[0].startswith("bootout gui/") and calls[1] == f"bootstrap gui/{os.getuid()} {written}"


def test_dry_run_prints_and_writes_nothing(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    path, log = fake_manager(tmp_path, "systemctl")
    r = run(
        tmp_path / "mh",
        "install-service",
        "--dry-run",
        HOME=str(user),
        PATH=path,
        MEMORYD_PORT="8123",
        ANTHROPIC_API_KEY="sk-ant-secret-value",
    )
    assert r.returncode == 0, r.stderr
    assert "[Service]" in r.stdout and "systemctl --user enable --now memoryd.service" in r.stdout
    assert (
        "[server] port = 8123" in r.stdout and "ANTHROPIC_API_KEY" in r.stdout and "sk-ant-secret-value" not in r.stdout
    )
    assert list(user.rglob("*")) == [] and not (tmp_path / "mh").exists() and not log.exists()


def test_install_carries_settings_keeps_secrets_out_enables_and_uninstalls(tmp_path: Path) -> None:
    if sys.platform == "darwin":
        pytest.skip("the systemd path; launchd is covered above")
    user, home = tmp_path / "user", tmp_path / "mh"
    user.mkdir()
    path, log = fake_manager(tmp_path, "systemctl")
    env = dict(
        HOME=str(user), PATH=path, MEMORYD_PORT="8123", ANTHROPIC_API_KEY="sk-ant-secret-value", MEMORYD_LLM="off"
    )
    r = run(home, "install-service", "--json", **env)
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout)
    unit = user / ".config" / "systemd" / "user" / "memoryd.service"
    assert result["path"] == str(unit) and "sk-ant-secret-value" not in unit.read_text()
    assert log.read_text().splitlines() == [
        "--user show-environment",  # is there a user manager at all? asked before anything is written
        "--user daemon-reload",
        "--user enable --now memoryd.service",
    ]
    assert result["ran"] == ["systemctl --user daemon-reload", "systemctl --user enable --now memoryd.service"]
    # What the service will see: only MEMORYD_HOME, the config file and the 0600 secrets file.
    service = load_settings({"MEMORYD_HOME": str(home)}, home=home)
    assert service.server.port == 8123 and service.llm.enabled is False
    secrets = home / "service.env"
    assert (
        stat.S_IMODE(secrets.stat().st_mode) == 0o600
        and secrets.read_text() == "ANTHROPIC_API_KEY=sk-ant-secret-value\n"
    )
    # Installing again with the same shell changes nothing in config.toml.
    before = (home / "config.toml").read_text()
    assert run(home, "install-service", **env).returncode == 0 and (home / "config.toml").read_text() == before
    # A setting the file already has a table for is the user's to edit: refused with the lines to add.
    clash = run(home, "install-service", "--json", **{**env, "MEMORYD_PORT": "9000"})
    assert (
        clash.returncode == 2
        and json.loads(clash.stdout)["error"]["code"] == "config_error"
        and "port = 9000" in clash.stdout
    )
    r = run(home, "uninstall-service", "--json", HOME=str(user), PATH=path)
    assert r.returncode == 0, r.stdout
    assert not unit.exists() and not secrets.exists() and json.loads(r.stdout)["removed"] == [str(unit), str(secrets)]
    assert log.read_text().splitlines()[-2:] == ["--user disable --now memoryd.service", "--user daemon-reload"]


def test_install_says_when_the_manager_refuses(tmp_path: Path) -> None:
    if sys.platform == "darwin":
        pytest.skip("the systemd path")
    user = tmp_path / "user"
    user.mkdir()
    path, _ = fake_manager(tmp_path, "systemctl", exit_code=1)
    r = run(tmp_path / "mh", "install-service", "--json", HOME=str(user), PATH=path)
    error = json.loads(r.stdout)["error"]
    assert r.returncode == 1 and error["code"] == "service_manager_failed"
    assert "no systemd user session" in error["message"] and "loginctl enable-linger" in error["message"]
    assert "Failed to connect to bus" not in error["message"]  # systemctl's words, said plainly (#51)
    r = run(tmp_path / "mh", "install-service", HOME=str(user), PATH=path)
    assert r.returncode == 1 and r.stdout == "" and "no systemd user manager answers" in r.stderr


def test_install_without_a_user_manager_writes_nothing(tmp_path: Path) -> None:
    """#39: in a container or WSL (no systemd --user) install-service failed after writing the unit and a
    config.toml, after which `memoryd config init` refused; now it finds out first and writes nothing."""
    if sys.platform == "darwin":
        pytest.skip("the systemd path")
    user, home = tmp_path / "user", tmp_path / "mh"
    user.mkdir()
    path, log = fake_manager(tmp_path, "systemctl", exit_code=1)
    env = dict(HOME=str(user), PATH=path, MEMORYD_PORT="8123", ANTHROPIC_API_KEY="sk-ant-secret-value")
    r = run(home, "install-service", **env)
    assert r.returncode == 1 and "nothing was written" in r.stderr and "memoryd setup" in r.stderr, r.stderr
    assert log.read_text().splitlines() == ["--user show-environment"]  # asked, nothing enabled
    assert list(user.rglob("*")) == [] and not home.exists()
    assert run(home, "config", "init", **env).returncode == 0


def test_an_install_the_manager_refuses_leaves_nothing_behind(tmp_path: Path) -> None:
    """The manager answers but will not enable the unit: the unit, the secrets file and config.toml's
    new lines are taken back; what config.toml held before stays."""
    if sys.platform == "darwin":
        pytest.skip("the systemd path")
    user, home = tmp_path / "user", tmp_path / "mh"
    user.mkdir()
    home.mkdir()
    (home / "config.toml").write_text("# mine\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text(
        '#!/bin/sh\ncase "$*" in *show-environment*) exit 0;; esac\necho "Unit refused" >&2\nexit 1\n'
    )
    (bin_dir / "systemctl").chmod(0o755)
    env = dict(HOME=str(user), PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", MEMORYD_PORT="8123")
    r = run(home, "install-service", **env, ANTHROPIC_API_KEY="sk-ant-secret-value")
    assert r.returncode == 1 and "Unit refused" in r.stderr and "nothing is left written" in r.stderr, r.stderr
    assert list(user.rglob("*")) == [] and (home / "config.toml").read_text() == "# mine\n"
    assert not (home / "service.env").exists()


def test_uninstall_reports_what_the_manager_could_not_do(tmp_path: Path) -> None:
    if sys.platform == "darwin":
        pytest.skip("the systemd path")
    user = tmp_path / "user"
    user.mkdir()
    path, _ = fake_manager(tmp_path, "systemctl", exit_code=1)
    unit = user / ".config" / "systemd" / "user" / "memoryd.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Unit]\n")  # installed while a user manager still ran
    r = run(tmp_path / "mh", "uninstall-service", "--json", HOME=str(user), PATH=path)
    result = json.loads(r.stdout)
    assert (
        r.returncode == 0
        and result["ran"] == []
        and len(result["failed"]) == 2
        and "No medium found" in result["failed"][0]
    )
    assert result["removed"] == [str(user / ".config" / "systemd" / "user" / "memoryd.service")]
