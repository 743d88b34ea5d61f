"""End to end: the real Claude Code CLI runs `memoryd mcp` from `--mcp-config` against a scripted
Messages API that calls memoryd's tools. Session 1's memory_save writes the file through a real
daemon; session 2's memory_recall hands it back to the model. Skips only when node or npm is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import run_headless
from tests.support.messages_api import Reply, ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env, loopback_client
from tests.test_claude_code_cli import claude_bin  # noqa: F401  (the cached CLI 2.1.330, installed on first use)

pytestmark = pytest.mark.e2e

SAVE = "mcp__memoryd__memory_save"
RECALL = "mcp__memoryd__memory_recall"
MEMORY = {
    "type": "feedback",
    "name": "Package manager",
    "description": "Use pnpm, never npm: the lockfile is pnpm-lock.yaml",
    "body": "Always pnpm.\n\n**Why:** the lockfile is pnpm-lock.yaml.\n**How to apply:** pnpm install, pnpm add.",
}


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool_result block in one request."""
    out = []
    for message in body.get("messages", []):
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return out


class Session:
    """A scripted model that calls one memoryd tool once, then answers in text. Claude Code defers MCP
    tools behind ToolSearch (names only), so the model first loads the tool's schema, as a real one would."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool, self.arguments = tool, arguments
        self.schema: dict[str, Any] = {}

    def __call__(self, body: dict[str, Any]) -> Reply:
        tools = {t.get("name", ""): t for t in body.get("tools", [])}
        self.schema = tools[self.tool]["input_schema"] if self.tool in tools else self.schema
        answered = [
            r for r in tool_results(body) if "tool_reference" not in r
        ]  # a ToolSearch result only loads a schema
        if self.tool not in tools and "ToolSearch" in tools and not tool_results(body):
            return Reply(tool_use=("ToolSearch", {"query": f"select:{self.tool}", "max_results": 1}))
        if self.tool in tools and not answered:
            return Reply(tool_use=(self.tool, self.arguments))
        return Reply(text="Done.")


@pytest.fixture
def api() -> Iterator[ScriptedMessagesAPI]:
    with ScriptedMessagesAPI() as scripted:
        yield scripted


def test_claude_code_saves_through_memoryd_mcp_and_recalls_next_session(
    tmp_path: Path, api: ScriptedMessagesAPI, claude_bin: Path
) -> None:  # noqa: F811
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    user_home.mkdir()
    daemon = DaemonProcess(home=home, env=daemon_env(home, HOME=str(user_home))).start()
    try:
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "memoryd": {
                            "command": sys.executable,
                            "args": ["-m", "memoryd", "mcp"],
                            "env": {"MEMORYD_HOME": str(home)},
                        }
                    }
                }
            )
        )
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "ANTHROPIC_", "CLAUDE"))}
        env = {
            **base,
            "HOME": str(user_home),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-dummy-key",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

        def ask(prompt: str, tool: str) -> subprocess.CompletedProcess[str]:
            return run_headless(
                ["-p", prompt, "--mcp-config", str(config), "--strict-mcp-config", "--allowedTools", tool], project, env
            )

        first_model = Session(SAVE, MEMORY)
        api.handler = first_model
        first = ask("Remember: we use pnpm, never npm.", SAVE)
        assert first.returncode == 0, first.stdout + first.stderr
        assert first_model.schema, "Claude Code never offered memory_save, even after ToolSearch"
        assert first_model.schema["properties"]["type"]["enum"] == ["user", "feedback", "project", "reference"]
        assert any("memoryd keeps this project's persistent memory" in t for t in api.texts_sent()), (
            "the server's instructions did not reach the model"
        )
        with loopback_client(daemon.url, headers={"Authorization": f"Bearer {daemon.token}"}) as c:
            memory_dir = Path(c.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
        # Claude Code made ~/.claude after the daemon started: its folder still gets its style (#51 item 5)
        saved = memory_dir / "package-manager.md"
        assert saved.exists(), (
            f"no memory file in {memory_dir}: {sorted(p.name for p in memory_dir.parent.rglob('*'))}; tool results "
            f"{[tool_results(b) for b in api.requests]}"
        )
        assert "pnpm-lock.yaml" in saved.read_text() and "Package manager" in (memory_dir / "MEMORY.md").read_text()

        api.requests.clear()
        api.handler = Session(RECALL, {"query": "which package manager installs the dependencies?"})
        second = ask("Install the dependencies.", RECALL)
        assert second.returncode == 0, second.stdout + second.stderr
        results = [r for body in api.requests for r in tool_results(body)]
        assert any("package-manager.md" in r and "pnpm-lock.yaml" in r for r in results), results
    finally:
        daemon.kill()


def test_print_config_for_claude_code_registers_a_server_that_connects(tmp_path: Path, claude_bin: Path) -> None:  # noqa: F811
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {
        **daemon_env(tmp_path / "memoryd"),
        "HOME": str(user_home),
        "PATH": f"{claude_bin.parent}{os.pathsep}{os.environ['PATH']}",
    }
    printed = subprocess.run(
        [sys.executable, "-m", "memoryd", "mcp", "--print-config", "claude-code"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert printed.returncode == 0 and printed.stdout.startswith("claude mcp add "), printed.stderr
    added = subprocess.run(
        printed.stdout, shell=True, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert added.returncode == 0, added.stdout + added.stderr
    got = subprocess.run(
        [str(claude_bin), "mcp", "get", "memoryd"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert "Connected" in got.stdout and f"MEMORYD_HOME={tmp_path / 'memoryd'}" in got.stdout, got.stdout + got.stderr
