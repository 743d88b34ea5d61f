"""`memoryd recall` against a real `memoryd serve` subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import DaemonProcess, daemon_env


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
def test_cli_recall_prints_choice_method_and_scores(daemon_process: DaemonProcess, home: Path, project: Path) -> None:
    daemon_process.start()
    with daemon_process.client() as c:
        r = c.post(
            "/v1/memories",
            json={
                "cwd": str(project),
                "name": "Staging deploys",
                "description": "Staging deploys need the VPN up first",
                "type": "project",
                "body": "Connect the VPN.",
            },
        )
        fn = r.json()["filename"]
    out = run_cli(home, "recall", "how do staging deploys work?", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "method: local" in out.stdout and fn in out.stdout and "score " in out.stdout
    # with a fixed session the second call has nothing new to show
    first = json.loads(run_cli(home, "recall", "staging deploys vpn", "--session", "S", "--json", cwd=project).stdout)
    assert [m["filename"] for m in first["memories"]] == [fn] and first["scores"][fn] > 0
    second = run_cli(home, "recall", "staging deploys vpn", "--session", "S", cwd=project)
    assert "No memories recalled." in second.stdout
    skipped = run_cli(home, "recall", "staging", cwd=project)
    assert "method: skipped (single-word query)" in skipped.stdout
    inject = run_cli(home, "recall", "staging deploys vpn", "--inject", cwd=project)
    assert inject.stdout.startswith("<system-reminder>\n<!-- memoryd -->\n")
