"""Memory at the moments of action, through the real Claude Code CLI and the plugin in this repository (#38):
the rule arrives before the tool call it governs (PreToolUse), and with a model backend that takes 3 s the
prompt is answered with the local choice at once while the model's pick reaches the same turn through the
async hook. What is asserted is what reaches the (scripted) model, and in which order."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
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
MODEL_SECONDS = 3.0


def tool_results(body: dict[str, Any]) -> int:
    """How many tool results the conversation holds so far: the step of the turn this request is."""
    return sum(
        1
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    )


def is_main(body: dict[str, Any]) -> bool:
    """The agent's own requests offer it the Bash tool; Claude Code's side queries do not."""
    return any(t.get("name") == "Bash" for t in body.get("tools") or [])


class Agent:
    """The scripted agent: runs the given Bash commands one per step, then answers; records when each main
    request arrived and what it carried."""

    def __init__(self, commands: list[str]) -> None:
        self.commands = commands
        self.main: list[tuple[float, str]] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        if not is_main(body):
            return Reply(text="ok")
        self.main.append((time.monotonic(), json.dumps(body)))
        step = tool_results(body)
        if step < len(self.commands):
            return Reply(tool_use=("Bash", {"command": self.commands[step], "description": "run it"}))
        return Reply(text="Done.")


class SlowModel:
    """memoryd's own model: takes MODEL_SECONDS, then picks the candidates it was offered from the lowest-ranked up."""

    def __init__(self) -> None:
        self.answered: list[float] = []
        self.picked: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        offered = re.findall(r"\] (\S+\.md) \(", json.dumps(body["messages"]))
        time.sleep(MODEL_SECONDS)
        self.picked = offered[::-1]
        self.answered.append(time.monotonic())
        return Reply(text=json.dumps({"selected_memories": self.picked}))


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.CompletedProcess[str], DaemonProcess]]]:
    """A project with the plugin installed from this repository; `run(prompt, agent, model=None, memories=[])`."""
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    user_home.mkdir()
    daemons: list[DaemonProcess] = []
    with ScriptedMessagesAPI() as api, ScriptedMessagesAPI() as memoryd_api:
        env = headless_env(user_home, home, api.url, path_first=Path(sys.executable).parent)
        env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"  # what reaches the model comes through memoryd's hooks only
        for args in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "install", PLUGIN_ID]):
            r = run_headless(args, project, env)
            assert r.returncode == 0, r.stdout + r.stderr

        def run(
            prompt: str, agent: Agent, model: SlowModel | None, memories: list[tuple[str, str]]
        ) -> tuple[subprocess.CompletedProcess[str], DaemonProcess]:
            extra = {"HOME": str(user_home)}
            if model is not None:
                memoryd_api.handler = model
                home.mkdir(parents=True, exist_ok=True)  # two a prompt: the local choice and the model's then differ
                (home / "config.toml").write_text("[recall]\nmax_memories = 2\n")
                extra |= {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": memoryd_api.url}
            daemon = DaemonProcess(home=home, env=daemon_env(home, **extra)).start()
            daemons.append(daemon)
            with daemon.client() as c:
                for name, description in memories:
                    # `forbid: {}`: no act is held, the rule arrives as context (the guard: test_guard_claude_code.py)
                    body = {"cwd": str(project), "name": name, "type": "project", "description": description}
                    body["forbid"] = {}
                    r = c.post("/v1/memories", json={**body, "body": description})
                    assert r.status_code in (200, 201), r.text
            api.handler = agent
            done = run_headless(["-p", prompt, "--allowedTools", "Bash"], project, env)
            return done, daemon

        try:
            yield run
        finally:
            for daemon in daemons:
                daemon.kill()


def test_the_rule_arrives_before_the_command_that_breaks_it(shop: Callable[..., Any]) -> None:
    agent = Agent(["npm --version"])
    memories = [
        ("Package manager", "Use pnpm, never npm: the lockfile is pnpm-lock.yaml"),
        ("Weekly sync", "The team meets on Tuesdays at 10:00 to plan the week"),
    ]
    done, _ = shop("Print the version of the tool we install packages with.", agent, None, memories)
    assert done.returncode == 0, done.stdout + done.stderr
    [(_, before_tool), (_, after_tool)] = agent.main
    hook_context = re.findall(r"PreToolUse:Bash hook additional context: (.{0,2000})", after_tool)
    block = hook_context[0] if hook_context else after_tool[-3000:]
    # the memory itself: its name (the title, in Claude Code's dialect too), description and body
    assert "name: Package manager" in block and "description: Use pnpm, never npm" in block, block[:800]
    assert "name: Weekly sync" not in after_tool  # (its index line, "[Weekly sync](…)", is in MEMORY.md)


def test_the_models_pick_reaches_the_same_turn_without_holding_the_prompt(shop: Callable[..., Any]) -> None:
    agent = Agent(
        [f"sleep {MODEL_SECONDS + 1:g}", "true"]
    )  # the model answers during the first tool call, before the second
    model = SlowModel()
    memories = [
        ("CI/CD pipeline", "Deploys go through GitHub Actions then Argo; never deploy from a laptop"),
        ("Release process", "Releases are tagged from main after the deploy job is green"),
        ("Deploy freeze", "No deploys on Fridays after 14:00, the on-call rota is thin"),
        ("Code review", "Every change needs one approving review before merge; the process is in CONTRIBUTING.md"),
    ]
    done, daemon = shop("What is the deployment process for a release?", agent, model, memories)
    assert done.returncode == 0, done.stdout + done.stderr
    assert model.answered, "memoryd never asked its model"
    first_at, first = agent.main[0]
    assert first_at < model.answered[0]  # the prompt reached the agent before the model had answered
    _, last = agent.main[-1]
    added = json.dumps(json.loads(last)["messages"][len(json.loads(first)["messages"]) :])  # what came in the turn
    delivered = [f for f in model.picked if f in added]
    assert delivered, f"the model's pick {model.picked} never reached the turn: {added[-3000:]}"


def test_claude_codes_own_reader_loads_a_memory_that_carries_applies_to(tmp_path: Path) -> None:
    """A memory saved with `applies_to` into Claude Code's own memory folder (its dialect: the field under
    `metadata`) is still loaded by the real CLI: its index line reaches the model at session start."""
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    (user_home / ".claude").mkdir(parents=True)  # Claude Code is installed: memoryd writes into its memory folder
    daemon = DaemonProcess(home=home, env=daemon_env(home, HOME=str(user_home))).start()
    try:
        with daemon.client() as c:
            r = c.post(
                "/v1/memories",
                json={
                    "cwd": str(project),
                    "name": "Migrations are append-only",
                    "type": "feedback",
                    "description": "Never edit an applied migration in db/migrations/; add a new one",
                    "body": "Applied migrations have run in production.",
                    "applies_to": {"paths": ["db/migrations/**"], "tools": ["Edit", "Write"]},
                },
            )
            assert r.status_code == 201, r.text
        saved = Path(r.json()["path"])
        assert saved.is_relative_to(user_home / ".claude" / "projects")
        assert "metadata:\n  type: feedback\n  applies_to:\n    paths:\n    - db/migrations/**" in saved.read_text()
        with ScriptedMessagesAPI() as api:
            api.handler = lambda body: Reply(text="Done.")
            env = headless_env(user_home, home, api.url, path_first=Path(sys.executable).parent)
            done = run_headless(["-p", "What do you know about migrations here?"], project, env)
            assert done.returncode == 0, done.stdout + done.stderr
            first = json.dumps(api.requests[0])
        assert "MEMORY.md (user's auto-memory" in first
        assert f"[Migrations are append-only]({saved.name})" in first  # the title, as it was saved (#51)
        assert "Never edit an applied migration in db/migrations/" in first
    finally:
        daemon.kill()
