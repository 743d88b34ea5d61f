"""memoryd behind Claude Code's own memory, measured with the real CLI 2.1.330 (headless, against
a scripted Messages API on 127.0.0.1): the folder the CLI creates is the one memoryd serves, and
MEMORY.md's lines reach the model exactly once whether native memory is on or off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.base import limits
from memoryd.integrations.claude_memory import claude_memory_dir
from tests.support.messages_api import ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env
from tests.test_claude_code_cli import claude_bin  # noqa: F401  (the fixture that installs the CLI)

pytestmark = pytest.mark.e2e

STAGING_LINE = "- [Staging DB](staging-db.md) — reset every Sunday night"
STAGING_FILE = """---
name: staging-db
description: the staging database is wiped every Sunday night
metadata:
  type: project
---
The staging DB is reset every Sunday night; never keep test fixtures there.
"""


class CLI:
    """The real `claude -p` with HOME in a temp dir, talking to the scripted API."""

    def __init__(self, binary: Path, user_home: Path, api: ScriptedMessagesAPI) -> None:
        self.binary = binary
        self.user_home = user_home
        self.api = api

    def env(self, **extra: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "ANTHROPIC_", "CLAUDE"))}
        return {
            **base,
            "HOME": str(self.user_home),
            "ANTHROPIC_BASE_URL": self.api.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-dummy-key",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            **extra,
        }

    def ask(self, cwd: Path, prompt: str, **env: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.binary), "-p", prompt],
            cwd=cwd,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 0, result.stderr
        return result

    def main_requests(self) -> list[dict[str, Any]]:
        """The conversation's own requests (they carry the tools), not the CLI's side queries."""
        return [r for r in self.api.requests if any(t.get("name") == "Write" for t in r.get("tools") or [])]


@pytest.fixture
def cli(tmp_path: Path, claude_bin: Path) -> Iterator[CLI]:  # noqa: F811
    user_home = tmp_path / "user"
    (user_home / ".claude").mkdir(parents=True)
    with ScriptedMessagesAPI() as api:
        api.default.text = "Understood."
        yield CLI(claude_bin, user_home, api)


def test_the_folder_the_cli_creates_is_the_one_memoryd_resolves(tmp_path: Path, cli: CLI) -> None:
    spaced = tmp_path / "my proj.v2" / "a_b.c d"
    long = tmp_path / ("x" * 120) / ("long dir é" + "y" * 100)  # over 200 chars once sanitized: cut + hash
    repo = tmp_path / "repo.git-ish"
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    subprocess.run([*git, "-C", str(repo), "worktree", "add", "-q", str(tmp_path / "wt two"), "-b", "two"], check=True)
    projects = cli.user_home / ".claude" / "projects"
    for cwd in (spaced, long, tmp_path / "wt two"):
        cwd.mkdir(parents=True, exist_ok=True)
        cli.ask(cwd, "hi")
        created = {p.parent.name for p in projects.glob("*/memory")}
        ours = claude_memory_dir(str(cwd), {"HOME": str(cli.user_home)})
        assert ours.is_dir() and ours.parent.name in created, (ours, created)
        # and the CLI told the model that very directory
        assert any(
            f"memory at `{ours}/`" in json.dumps(r, ensure_ascii=False).replace("\\n", "\n")
            for r in cli.main_requests()[-1:]
        ), ours
    assert claude_memory_dir(str(tmp_path / "wt two"), {"HOME": str(cli.user_home)}).parent.name.endswith(
        "-repo-git-ish"
    )


@pytest.fixture
def served(tmp_path: Path, cli: CLI) -> Iterator[tuple[Path, Path, DaemonProcess]]:
    """A project whose Claude Code memory dir holds a hand-written index line, memoryd serving it
    (memory_base = "auto", the default) with its hooks installed in the user's settings."""
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    memdir = claude_memory_dir(str(project), {"HOME": str(cli.user_home)})
    memdir.mkdir(parents=True)
    (memdir / "MEMORY.md").write_text(STAGING_LINE + "\n")
    (memdir / "staging-db.md").write_text(STAGING_FILE)
    home = tmp_path / "memoryd"
    home.mkdir()
    (home / "config.toml").write_text(f'[transcripts]\nroots = ["{cli.user_home / ".claude" / "projects"}"]\n')
    daemon = DaemonProcess(home=home, env=daemon_env(home, HOME=str(cli.user_home)))
    daemon.start()
    env = {**cli.env(), "MEMORYD_HOME": str(home)}
    install = subprocess.run(
        [sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, capture_output=True, text=True, timeout=60
    )
    assert install.returncode == 0, install.stderr
    try:
        yield project, memdir, daemon
    finally:
        daemon.kill()


def _times_sent(request: dict[str, Any], text: str) -> int:
    return json.dumps(request, ensure_ascii=False).count(text)


@pytest.mark.parametrize("native", ["on", "off"])
def test_the_index_reaches_the_model_exactly_once(
    served: tuple[Path, Path, DaemonProcess], cli: CLI, native: str
) -> None:
    project, memdir, daemon = served
    with daemon.client() as c:
        assert (
            c.get("/v1/memories", params={"cwd": str(project)}).status_code == 200
        )  # memoryd serves Claude Code's dir
    switch = {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"} if native == "off" else {}
    cli.api.requests.clear()
    cli.ask(project, "What should I know about the staging database before I run the fixtures?", **switch)
    first = cli.main_requests()[0]
    assert _times_sent(first, STAGING_LINE) == 1, json.dumps(first, ensure_ascii=False)[:3000]
    # a recalled body arrives at most once too (Claude Code's own recall or memoryd's, not both)
    assert _times_sent(first, "never keep test fixtures there") <= 1, json.dumps(first, ensure_ascii=False)[:3000]
    # memoryd's memory section (instructions + index) arrives only when Claude Code does not load the index itself.
    assert (limits.INJECTED_MARKER + "\n# Memory" in json.dumps(first, ensure_ascii=False).replace("\\n", "\n")) == (
        native == "off"
    )
    assert (memdir / "MEMORY.md").read_text().startswith(STAGING_LINE)


PNPM_FILE = """---
name: pnpm-only
description: Always use pnpm for installs
metadata:
  type: feedback
---
Use pnpm, never npm: the lockfile is pnpm-lock.yaml.

**Why:** npm rewrote the lockfile and broke CI.
**How to apply:** every install and script run. See [[ci-runners]].
"""
PNPM_LINE = "- [pnpm only](pnpm-only.md) — always pnpm for installs, never npm"


def _tool_results(body: dict[str, Any]) -> int:
    return sum(
        1
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    )


def test_session_one_writes_memory_session_two_gets_the_index_once(
    served: tuple[Path, Path, DaemonProcess], cli: CLI
) -> None:
    """The issue's end-to-end test: the agent writes a memory in the CLI's format; memoryd lists it
    with its type, recalls it, a dream run merges it and undo restores it; session 2 sees the index once."""
    from tests.support.messages_api import Reply

    project, memdir, daemon = served
    (memdir / "MEMORY.md").write_text("")
    (memdir / "staging-db.md").unlink()

    def agent(body: dict[str, Any]) -> Reply:
        if not any(t.get("name") == "Write" for t in body.get("tools") or []):
            return Reply(text="[]")  # the CLI's side queries
        step = _tool_results(body)
        if step == 0 and "Remember" in json.dumps(body["messages"]):
            return Reply(tool_use=("Write", {"file_path": str(memdir / "pnpm-only.md"), "content": PNPM_FILE}))
        if step == 1 and "Remember" in json.dumps(body["messages"]):
            return Reply(tool_use=("Write", {"file_path": str(memdir / "MEMORY.md"), "content": PNPM_LINE + "\n"}))
        return Reply(text="Saved.")

    cli.api.handler = agent
    cli.api.default = Reply(text="Saved.")
    cli.ask(project, "Remember: always use pnpm, never npm, because our lockfile is pnpm-lock.yaml.")
    written = (memdir / "pnpm-only.md").read_text()  # the CLI's format (it stamps metadata.node_type: memory too)
    assert "name: pnpm-only" in written and "  type: feedback" in written and "[[ci-runners]]" in written
    with daemon.client() as c:  # the turn in which the agent wrote memory itself is not extracted again
        deadline = time.monotonic() + 30
        while (jobs := c.get("/v1/status").json()["jobs"]).get("skipped", 0) < 1:
            assert time.monotonic() < deadline and not jobs.get("done"), jobs
            time.sleep(0.2)

    # Without the store's dialect support (branch store), memoryd's index rebuild drops the agent's line.
    pytest.importorskip(
        "memoryd.store.dialect", reason="Claude Code's dialect and kept MEMORY.md lines come with branch store"
    )
    assert PNPM_LINE in (memdir / "MEMORY.md").read_text()

    # Session 2: Claude Code loads the index itself; memoryd's hooks do not add it again.
    cli.api.requests.clear()
    cli.ask(project, "Which package manager should I use to install the dependencies?")
    first = cli.main_requests()[0]
    assert _times_sent(first, PNPM_LINE) == 1, (memdir / "MEMORY.md").read_text()

    with daemon.client() as c:
        listed = {m["filename"]: m for m in c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]}
        assert listed["pnpm-only.md"]["type"] == "feedback"
        recalled = c.post(
            "/v1/recall",
            json={"cwd": str(project), "query": "should installs use npm or pnpm?", "session_id": "e2e-recall"},
        ).json()
        assert any(m["filename"] == "pnpm-only.md" for m in recalled["memories"]), recalled
        saved = c.post(
            "/v1/memories",
            json={
                "cwd": str(project),
                "name": "Use pnpm",
                "description": "Always use pnpm for installs",
                "type": "feedback",
                "body": "pnpm for every install.",
            },
        )
        assert saved.status_code in (200, 201), saved.text
        run_id = c.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"]
        deadline = time.monotonic() + 30
        while (
            run := next(
                r for r in c.get("/v1/dream/runs", params={"cwd": str(project)}).json()["runs"] if r["run_id"] == run_id
            )
        )["status"] == "running":
            assert time.monotonic() < deadline, run
            time.sleep(0.1)
        assert run["status"] == "done", run
        after = {m["filename"] for m in c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]}
        assert len(after & {"pnpm-only.md", saved.json()["filename"]}) == 1  # merged into one
        assert c.post(f"/v1/dream/runs/{run_id}/undo").status_code == 200
    assert (memdir / "pnpm-only.md").read_text() == written  # restored byte for byte
