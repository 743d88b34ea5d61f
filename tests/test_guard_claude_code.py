"""The guard through the real Claude Code CLI (issue 50): a memory that forbids npm holds the model's `npm install
lodash` (PreToolUse answers deny), the next request carries the reason, and the model's `pnpm add lodash` then runs.
Also what `"ask"` does in `claude -p` in each permission mode, and that Claude Code's own reader still loads a
memory carrying `forbid:` in its dialect. `npm` and `pnpm` are fake scripts on PATH that record their calls."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.integrations.claude_plugin import PLUGIN_ID
from tests.support.claude_cli import headless_env, run_headless
from tests.support.messages_api import Reply, ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
PNPM = {
    "name": "Package manager",
    "type": "feedback",
    "description": "This project uses pnpm, never npm: the lockfile is pnpm-lock.yaml",
    "body": "**Why:** one lockfile.\n**How to apply:** `pnpm add <pkg>`.",
}
LEGACY = {"name": "Legacy frozen", "type": "feedback", "description": "Never create files under `legacy/`"}
RECORDER = '#!/bin/sh\necho "{name} $*" >> "{log}"\necho "{name} ran"\n'


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result the conversation holds so far."""
    out = []
    for m in body.get("messages", []):
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                content = b.get("content")
                out.append(json.dumps(content) if not isinstance(content, str) else content)
    return out


class Agent:
    """Runs `npm install lodash`; once a tool result says to use pnpm, runs what it says; then answers."""

    def __init__(self) -> None:
        self.main: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        if not any(t.get("name") == "Bash" for t in body.get("tools") or []):
            return Reply(text="ok")
        self.main.append(body)
        results = tool_results(body)
        if not results:
            return Reply(tool_use=("Bash", {"command": "npm install lodash", "description": "add lodash"}))
        if len(results) == 1 and "pnpm add lodash" in results[0]:
            return Reply(tool_use=("Bash", {"command": "pnpm add lodash", "description": "add lodash with pnpm"}))
        return Reply(text="Done.")


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Callable[..., tuple[Agent, list[str], Any]]]:
    """`run(mode, args, memoryd_guard=None)`: one headless session in a project whose memory forbids npm, with the
    plugin installed from this repository; answers (agent, the recorded npm/pnpm calls, the process)."""
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    user_home.mkdir()
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for name in ("npm", "pnpm"):
        (bin_dir / name).write_text(RECORDER.format(name=name, log=calls))
        (bin_dir / name).chmod(0o755)
    daemons: list[DaemonProcess] = []
    with ScriptedMessagesAPI() as api:
        env = headless_env(user_home, home, api.url, path_first=bin_dir)
        env["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}:{env['PATH']}"
        env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
        for args in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "install", PLUGIN_ID]):
            r = run_headless(args, project, env)
            assert r.returncode == 0, r.stdout + r.stderr

        def run(
            mode: str, args: list[str], memoryd_guard: str | None = None, sandbox: bool = False
        ) -> tuple[Agent, list[str], Any]:
            home.mkdir(parents=True, exist_ok=True)
            (home / "config.toml").write_text(f'[guard]\nmode = "{mode}"\n')
            calls.unlink(missing_ok=True)
            daemon = DaemonProcess(home=home, env=daemon_env(home, HOME=str(user_home))).start()
            daemons.append(daemon)
            with daemon.client() as c:
                r = c.post("/v1/memories", json={"cwd": str(project), **PNPM})
                assert r.status_code in (200, 201) and r.json()["will_stop"], r.text
            agent = Agent()
            api.handler = agent
            session_env = {**env, **({"MEMORYD_GUARD": memoryd_guard} if memoryd_guard else {})}
            if sandbox:  # bypassPermissions refuses to run as root outside a sandbox it is told of
                session_env["IS_SANDBOX"] = "1"
            done = run_headless(["-p", "Add lodash to the project.", *args], project, session_env)
            ran = calls.read_text().splitlines() if calls.exists() else []
            daemon.kill()
            return agent, ran, done

        try:
            yield run
        finally:
            for daemon in daemons:
                daemon.kill()
        assert not (project / "package-lock.json").exists()


def test_npm_is_denied_the_model_reads_why_and_pnpm_runs(shop: Callable[..., Any]) -> None:
    agent, ran, done = shop("deny", ["--allowedTools", "Bash"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert ran == ["pnpm add lodash"], ran  # no npm ran; the scripted model's pnpm did
    reason = tool_results(agent.main[1])[0]
    assert "memoryd held this act" in reason and "run `pnpm add lodash`" in reason and "forbid:" in reason


def test_memoryd_guard_off_lets_the_act_run(shop: Callable[..., Any]) -> None:
    _, ran, done = shop("deny", ["--allowedTools", "Bash"], memoryd_guard="off")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ran == ["npm install lodash"], ran


@pytest.mark.parametrize(
    ("mode", "permission_args"),
    [
        ("ask", ["--allowedTools", "Bash"]),
        ("ask", []),
        ("ask", ["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]),
        ("ask", ["--permission-mode", "bypassPermissions"]),
        ("deny", ["--permission-mode", "bypassPermissions"]),
    ],
    ids=["ask-default-bash-allowed", "ask-default", "ask-acceptEdits", "ask-bypassPermissions", "deny-bypass"],
)
def test_held_in_claude_p_whatever_the_permission_mode(
    shop: Callable[..., Any], mode: str, permission_args: list[str]
) -> None:
    """Measured with Claude Code 2.1.330: in `claude -p` nobody can answer "ask", so the act does not run in any
    permission mode, bypassPermissions included, and the model reads the reason, as with deny (docs/guard.md)."""
    agent, ran, done = shop(mode, permission_args, sandbox=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "npm install lodash" not in ran, ran
    assert "memoryd held this act" in tool_results(agent.main[1])[0]


def test_claude_codes_own_reader_still_loads_a_memory_with_forbid(tmp_path: Path) -> None:
    """A memory saved with a proposed `forbid:` into Claude Code's own memory folder (under `metadata`) is still
    loaded by the real CLI: its index line reaches the model at session start."""
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    (user_home / ".claude").mkdir(parents=True)
    daemon = DaemonProcess(home=home, env=daemon_env(home, HOME=str(user_home))).start()
    try:
        with daemon.client() as c:
            r = c.post("/v1/memories", json={"cwd": str(project), **PNPM})
            assert r.status_code == 201, r.text
            legacy = c.post("/v1/memories", json={"cwd": str(project), **LEGACY})
            assert legacy.status_code == 201, legacy.text
        saved = Path(r.json()["path"])
        assert "metadata:\n  type: feedback\n  forbid:\n    commands:\n    - npm\n    - npx" in saved.read_text()
        kept_out = Path(legacy.json()["path"])
        assert "metadata:\n  type: feedback\n  forbid:\n    creates:\n    - legacy/**" in kept_out.read_text()
        with ScriptedMessagesAPI() as api:
            api.handler = lambda body: Reply(text="Done.")
            env = headless_env(user_home, home, api.url, path_first=Path(sys.executable).parent)
            done = run_headless(["-p", "Which package manager do we use?"], project, env)
            assert done.returncode == 0, done.stdout + done.stderr
            first = json.dumps(api.requests[0])
        assert f"[{PNPM['name']}]({saved.name})" in first and "This project uses pnpm, never npm" in first
        assert f"[{LEGACY['name']}]({kept_out.name})" in first
    finally:
        daemon.kill()
