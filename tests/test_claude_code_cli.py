"""End to end with the real Claude Code CLI (npm @anthropic-ai/claude-code, run headless with
`claude -p`) against a scripted Messages API on 127.0.0.1 and a real memoryd subprocess.

What is asserted is what reaches the model. Skips only when node or npm is missing.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memoryd.base import limits
from tests.support.claude_cli import claude_binary, headless_env
from tests.support.messages_api import ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return claude_binary()


class World:
    def __init__(self, tmp: Path, api: ScriptedMessagesAPI, claude: Path) -> None:
        self.user_home = tmp / "user"
        self.home = tmp / "memoryd"
        self.project = tmp / "work" / "shop"
        (self.project / ".git").mkdir(parents=True)
        self.home.mkdir()
        roots = self.user_home / ".claude" / "projects"
        roots.mkdir(parents=True)
        (self.home / "config.toml").write_text(f'[transcripts]\nroots = ["{roots}"]\n')
        self.api = api
        self.claude = claude
        self.daemon = DaemonProcess(home=self.home, env=daemon_env(self.home, HOME=str(self.user_home)))

    def env(self) -> dict[str, str]:
        return headless_env(self.user_home, self.home, self.api.url)

    def ask(self, prompt: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.claude), "-p", prompt],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )


@pytest.fixture
def world(tmp_path: Path, claude_bin: Path) -> Iterator[World]:
    with ScriptedMessagesAPI() as api:
        api.default.text = "Understood."
        w = World(tmp_path, api, claude_bin)
        w.daemon.start()
        install = subprocess.run(
            [sys.executable, "-m", "memoryd", "hooks", "--install"],
            env=w.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert install.returncode == 0, install.stderr
        try:
            yield w
        finally:
            w.daemon.kill()


def test_memory_learned_in_session_one_reaches_the_model_in_session_two(world: World) -> None:
    first = world.ask("Remember: always use pnpm, never npm, because our lockfile is pnpm-lock.yaml.")
    assert first.returncode == 0, first.stderr
    deadline = time.monotonic() + 30
    with world.daemon.client() as c:
        while not any(
            "pnpm" in m["description"]
            for m in c.get("/v1/memories", params={"cwd": str(world.project)}).json()["memories"]
        ):
            assert time.monotonic() < deadline, f"session 1 was not extracted: {c.get('/v1/status').json()['jobs']}"
            time.sleep(0.2)
    world.api.requests.clear()
    second = world.ask("Which package manager should I use to install the dependencies?")
    assert second.returncode == 0, second.stderr
    sent = world.api.texts_sent()
    # Through Claude Code's own memory (MEMORY.md in its dir, memory_base = "auto") or memoryd's injection: the
    # second prompt never says "pnpm", so any "pnpm" the model gets came from session one's memory.
    assert any("pnpm" in t for t in sent), "session one's memory did not reach the model"
    assert any("Which package manager should I use" in t for t in sent)


def test_claude_still_answers_when_memoryd_is_down(world: World) -> None:
    world.daemon.kill()
    world.api.requests.clear()
    t = time.monotonic()
    result = world.ask("Say hello to the team")
    assert result.returncode == 0 and "Understood." in result.stdout, result.stderr
    sent = world.api.texts_sent()
    assert any("Say hello to the team" in t for t in sent)
    assert not any(limits.INJECTED_MARKER in t for t in sent)
    assert time.monotonic() - t < 120
    with pytest.raises(httpx.HTTPError):
        httpx.get(world.daemon.url + "/v1/health", timeout=1)
