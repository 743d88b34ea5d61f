"""`memoryd doctor` against a real daemon subprocess, and with the daemon down."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.servers import DaemonProcess, daemon_env


def doctor(env: dict[str, str], cwd: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    run = subprocess.run([sys.executable, "-m", "memoryd", "doctor", "--json", "--cwd", str(cwd)], env=env, capture_output=True, text=True, timeout=60)
    return run.returncode, json.loads(run.stdout)


def test_doctor_reports_problems_with_fixes_then_passes(home: Path, project: Path, tmp_path: Path) -> None:
    user_home = tmp_path / "user"
    (user_home / ".claude" / "projects").mkdir(parents=True)
    (home / "config.toml").write_text(f'[transcripts]\nroots = ["{user_home / ".claude" / "projects"}"]\n')
    env = daemon_env(home, HOME=str(user_home), MEMORYD_PORT="1")
    code, report = doctor(env, project)
    checks = {c["name"]: c for c in report["checks"]}
    assert code == 1 and not report["ok"]
    assert not checks["daemon"]["ok"] and "memoryd serve" in checks["daemon"]["fix"]
    assert not checks["claude-code hooks"]["ok"] and checks["claude-code hooks"]["fix"] == "memoryd hooks --install"
    daemon = DaemonProcess(home=home, env=daemon_env(home, HOME=str(user_home))).start()
    try:
        env.pop("MEMORYD_PORT")
        subprocess.run([sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, check=True, capture_output=True)
        unit = user_home / ".config" / "systemd" / "user" / "memoryd.service"
        unit.parent.mkdir(parents=True)
        unit.write_text("[Unit]\n")
        code, report = doctor(env, project)
        failed = [c for c in report["checks"] if not c["ok"]]
        assert code == 0 and report["ok"], failed
        checks = {c["name"]: c for c in report["checks"]}
        assert checks["token"]["detail"].endswith("mode 600") and "→" in checks["memory dir"]["detail"]
        assert checks["grep"]["detail"].startswith("ripgrep: ") and "ripgrep 14.1.0" in checks["grep"]["detail"]
        (home / "config.toml").write_text((home / "config.toml").read_text() + f'ripgrep = "{tmp_path / "no-rg"}"\n')
        code, report = doctor(env, project)
        grep = next(c for c in report["checks"] if c["name"] == "grep")
        assert code == 1 and not grep["ok"] and "not an executable file" in grep["detail"] and '"auto"' in grep["fix"]
    finally:
        daemon.kill()
