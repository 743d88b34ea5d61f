"""Nothing moves under the user: a project with memories in memoryd's own store keeps being
served from there when ~/.claude appears later, until the user imports them; after the import,
doctor and status are green. A real daemon (served in the test's process), the real CLI for what
the user runs (save, hooks, doctor, status, import), a fresh HOME; what is listed and where the
memory dir is, the daemon's API answers (`memoryd list` and `index` print just that, tests/test_cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoryd.integrations.claude_memory import claude_memory_dir
from tests.conftest import serve_env
from tests.support.servers import daemon_env

# End-to-end (real CLIs and daemons across a Claude Code install appearing):
# CI runs it after the fast suite, which stays under 2 minutes.
pytestmark = pytest.mark.e2e


def memoryd(env: dict[str, str], project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )


def listed(client: httpx.Client, project: Path) -> list[str]:
    r = client.get("/v1/memories", params={"cwd": str(project)})
    assert r.status_code == 200, r.text
    return [m["name"] for m in r.json()["memories"]]


def memory_dir(client: httpx.Client, project: Path) -> Path:
    return Path(client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])


def doctor(env: dict[str, str], project: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    run = memoryd(env, project, "doctor", "--json")
    return run.returncode, {c["name"]: c for c in json.loads(run.stdout)["checks"]}


def test_a_memory_saved_before_claude_code_stays_until_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))  # the daemon, served in this process, sees the HOME the CLI runs get
    with serve_env(daemon_env(home, HOME=str(user_home))) as (daemon, env):
        api = daemon.client
        saved = memoryd(
            env,
            project,
            "save",
            "-t",
            "project",
            "-n",
            "pnpm",
            "-d",
            "use pnpm, never npm",
            "-b",
            "The lockfile is pnpm-lock.yaml.",
        )
        assert saved.returncode == 0, saved.stderr
        own = memory_dir(api, project)
        assert own.is_relative_to(home)

        # Claude Code appears (here through `hooks --install`, which creates ~/.claude): the memory stays listed.
        assert memoryd(env, project, "hooks", "--install").returncode == 0
        assert (user_home / ".claude").is_dir() and listed(api, project) == ["pnpm"]
        code, checks = doctor(env, project)
        assert code == 0, [c for c in checks.values() if not c["ok"]]
        assert (
            f"memoryd import --from '{own}'" in checks["import"]["fix"]
            and "1 memories stay" in checks["import"]["detail"]
        )
        assert "import:  1 memories stay in memoryd's own store" in memoryd(env, project, "status").stdout
        assert not any(
            " offline: offline" in c["detail"] or c["detail"].startswith("offline: offline") for c in checks.values()
        )

        dry = memoryd(env, project, "import", "--from", str(own), "--dry-run", "--json")
        assert json.loads(dry.stdout)["counts"] == {"save": 1}, (
            dry.stdout
        )  # new to Claude Code's dir, not a "duplicate"
        assert listed(api, project) == ["pnpm"] and not claude_memory_dir(str(project), env).exists()

        done = memoryd(env, project, "import", "--from", str(own), "--json")
        assert done.returncode == 0 and json.loads(done.stdout)["counts"] == {"saved": 1}, done.stdout
        cc_dir = claude_memory_dir(str(project), env)
        assert memory_dir(api, project) == cc_dir
        assert (
            listed(api, project) == ["pnpm"] and (own / "project_pnpm.md").exists()
        )  # copied; the old store is left as it was
        code, checks = doctor(env, project)
        assert code == 0 and "import" not in checks, checks
        assert "import:" not in memoryd(env, project, "status").stdout
        again = memoryd(env, project, "import", "--from", str(own), "--json")
        assert json.loads(again.stdout)["counts"] == {"duplicate": 1}  # memories already present count as imported
