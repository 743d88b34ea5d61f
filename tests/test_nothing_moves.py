"""Nothing moves under the user: a project with memories in memoryd's own store keeps being
served from there when ~/.claude appears later, until the user imports them; after the import,
doctor and status are green. A real daemon, the real CLI, a fresh HOME."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from memoryd.integrations.claude_memory import claude_memory_dir
from tests.support.servers import DaemonProcess, daemon_env


def memoryd(env: dict[str, str], project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memoryd", *args], cwd=project, env=env, capture_output=True, text=True, timeout=60)


def listed(env: dict[str, str], project: Path) -> list[str]:
    run = memoryd(env, project, "list", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    return [m["name"] for m in json.loads(run.stdout)["memories"]]


def doctor(env: dict[str, str], project: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    run = memoryd(env, project, "doctor", "--json")
    return run.returncode, {c["name"]: c for c in json.loads(run.stdout)["checks"]}


def test_a_memory_saved_before_claude_code_stays_until_imported(tmp_path: Path) -> None:
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    user_home.mkdir()
    env = daemon_env(home, HOME=str(user_home))
    daemon = DaemonProcess(home=home, env=env).start()
    try:
        saved = memoryd(env, project, "save", "-t", "project", "-n", "pnpm", "-d", "use pnpm, never npm", "-b", "The lockfile is pnpm-lock.yaml.")
        assert saved.returncode == 0, saved.stderr
        own = Path(json.loads(memoryd(env, project, "index", "--json").stdout)["memory_dir"])
        assert own.is_relative_to(home)

        # Claude Code appears (here through `hooks --install`, which creates ~/.claude): the memory stays listed.
        assert memoryd(env, project, "hooks", "--install").returncode == 0
        assert (user_home / ".claude").is_dir() and listed(env, project) == ["pnpm"]
        code, checks = doctor(env, project)
        assert code == 0, [c for c in checks.values() if not c["ok"]]
        assert f"memoryd import --from '{own}'" in checks["import"]["fix"] and "1 memories stay" in checks["import"]["detail"]
        assert "import:  1 memories stay in memoryd's own store" in memoryd(env, project, "status").stdout
        assert not any(" offline: offline" in c["detail"] or c["detail"].startswith("offline: offline") for c in checks.values())

        dry = memoryd(env, project, "import", "--from", str(own), "--dry-run", "--json")
        assert json.loads(dry.stdout)["counts"] == {"save": 1}, dry.stdout  # new to Claude Code's dir, not a "duplicate"
        assert listed(env, project) == ["pnpm"] and not claude_memory_dir(str(project), env).exists()

        done = memoryd(env, project, "import", "--from", str(own), "--json")
        assert done.returncode == 0 and json.loads(done.stdout)["counts"] == {"saved": 1}, done.stdout
        cc_dir = claude_memory_dir(str(project), env)
        assert Path(json.loads(memoryd(env, project, "index", "--json").stdout)["memory_dir"]) == cc_dir
        assert listed(env, project) == ["pnpm"] and (own / "project_pnpm.md").exists()  # copied; the old store is left as it was
        code, checks = doctor(env, project)
        assert code == 0 and "import" not in checks, checks
        assert "import:" not in memoryd(env, project, "status").stdout
        again = memoryd(env, project, "import", "--from", str(own), "--json")
        assert json.loads(again.stdout)["counts"] == {"duplicate": 1}  # memories already present count as imported
    finally:
        daemon.kill()
