"""`memoryd grep` against a real daemon subprocess: project scope, --all, --json, refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.store.paths import project_root, sanitize_path
from tests.support.servers import DaemonProcess, daemon_env
from tests.support.transcripts import new_session


def run_cli(home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        env=daemon_env(home),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.e2e
def test_cli_grep(daemon_process: DaemonProcess, home: Path, project: Path, tmp_path: Path) -> None:
    roots = tmp_path / "cc-projects"
    (home / "config.toml").write_text(f'[transcripts]\nroots = ["{roots}"]\nwatch = false\n')
    mine = new_session(roots, str(project_root(str(project))), "sess-mine")
    mine.user("the deploy failed with ETIMEDOUT on staging")
    other = new_session(roots, "/elsewhere/app", "sess-other")
    other.user("ETIMEDOUT in another project")
    assert mine.path.parent.name == sanitize_path(str(project_root(str(project))))
    daemon_process.start()
    out = run_cli(home, "grep", "ETIMEDOUT", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "sess-mine:1" in out.stdout and "[user]" in out.stdout and "sess-other" not in out.stdout
    data = json.loads(run_cli(home, "grep", "etimedout", "-i", "--all", "--json", cwd=project).stdout)
    assert {h["session_id"] for h in data["results"]} == {"sess-mine", "sess-other"}
    bad = run_cli(home, "grep", ".*", "-E", cwd=project)
    assert bad.returncode == 1 and "empty string" in bad.stderr
    none = run_cli(home, "grep", "nothing-like-this", cwd=project)
    assert none.returncode == 1 and "No matches" in none.stdout  # like grep: 1 when nothing matched
