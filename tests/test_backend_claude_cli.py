"""The `claude-cli` backend with the real Claude Code CLI 2.1.330 (npm), signed in through an
`apiKeyHelper` in a throw-away HOME and pointed at a scripted Messages API by ANTHROPIC_BASE_URL,
driven by a real memoryd subprocess whose `auto` backend finds it on PATH.

What is asserted: every model-backed job (extraction, session notes, dream, recall) goes
through the CLI with memoryd's prompt and structured output; the calls fire no hook (neither
the user's nor memoryd's), leave no transcript, carry no CLAUDE.md; tokens are metered.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoryd.base.clock import SYSTEM_CLOCK
from memoryd.base.errors import TokenBudgetExceeded
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.extract.offline import extract_explicit
from memoryd.llm import LLMClient, UsageMeter
from memoryd.llm.claude_cli import ClaudeCLIBackend
from memoryd.llm.schemas import RecallSelection
from tests.support.messages_api import Reply, ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env
from tests.support.transcripts import new_session
from tests.test_claude_code_cli import claude_bin  # noqa: F401  (the cached real CLI)

pytestmark = pytest.mark.e2e

IMPLICIT = "the lockfile is pnpm-lock.yaml these days, npm keeps breaking it"
PNPM = {
    "name": "Package manager",
    "type": "project",
    "description": "The project uses pnpm since 2026-11-16 (lockfile pnpm-lock.yaml)",
    "body": "Use pnpm, not npm.\n\n**Why:** the team moved to pnpm.\n**How to apply:** pnpm install / pnpm add.",
}


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system or [])


def model(body: dict[str, Any]) -> Reply:
    """The scripted model: answers each memoryd prompt the way a good model would."""
    system, tools = system_text(body), [t["name"] for t in body.get("tools") or []]
    if "You extract durable memories" in system and tools:
        return Reply(tool_input={"memories": [PNPM]}, input_tokens=900, output_tokens=80)
    if "You are selecting memories" in system and tools:
        manifest = json.dumps(body["messages"])
        picked = [
            w.strip('\\"(,') for w in manifest.split() if w.startswith(("project_package", "package")) and ".md" in w
        ]  # memoryd's naming or Claude Code's
        return Reply(tool_input={"selected_memories": picked[:1]}, input_tokens=300, output_tokens=20)
    if "running notes of one coding-agent session" in system:
        return Reply(
            text="# Session Title\nMove to pnpm\n# Current State\nLockfile switched.\n",
            input_tokens=700,
            output_tokens=60,
        )
    if tools:  # the dream plan
        return Reply(tool_input={"actions": [], "summary": "nothing to merge"}, input_tokens=500, output_tokens=15)
    return Reply(text="unexpected prompt")


class World:
    def __init__(self, tmp: Path, api: ScriptedMessagesAPI, claude: Path) -> None:
        self.user_home = tmp / "user"
        self.home = tmp / "memoryd"
        self.project = tmp / "work" / "shop"
        (self.project / ".git").mkdir(parents=True)
        (self.project / "CLAUDE.md").write_text("PROJECT-CLAUDE-MD-MARKER")
        claude_dir = self.user_home / ".claude"
        self.roots = claude_dir / "projects"
        self.roots.mkdir(parents=True)
        self.hook_log = tmp / "hooks.log"
        hooks = {
            ev: [{"hooks": [{"type": "command", "command": f"echo {ev} >> {self.hook_log}"}]}]
            for ev in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
        }
        (claude_dir / "settings.json").write_text(
            json.dumps({"apiKeyHelper": "echo sk-ant-helper-key", "hooks": hooks})
        )
        (claude_dir / "CLAUDE.md").write_text("USER-CLAUDE-MD-MARKER")
        self.home.mkdir()
        (self.home / "config.toml").write_text(
            f'[transcripts]\nroots = ["{self.roots}"]\n[session_memory]\ninit_tokens = 0\n'
            "[recall]\ndeadline_seconds = 60\n[llm]\ntimeout_seconds = 120\n"
        )
        env = daemon_env(
            self.home,
            HOME=str(self.user_home),
            ANTHROPIC_BASE_URL=api.url,
            PATH=f"{claude.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        )
        self.daemon = DaemonProcess(home=self.home, env=env)
        self.api = api

    def transcripts(self) -> list[Path]:
        return sorted(self.roots.rglob("*.jsonl"))


@pytest.fixture
def world(tmp_path: Path, claude_bin: Path) -> Iterator[World]:  # noqa: F811
    with ScriptedMessagesAPI() as api:
        api.handler = model
        w = World(tmp_path, api, claude_bin)
        w.daemon.start(timeout=60)
        try:
            yield w
        finally:
            w.daemon.kill()


def wait(client: httpx.Client, path: str, done: Any, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        data = client.get(path).json()
        if done(data):
            return data  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, data
        time.sleep(0.2)


def test_every_job_runs_through_the_users_claude_login_sealed_off(world: World) -> None:
    with world.daemon.client() as c:
        llm = c.get("/v1/status").json()["llm"]
        assert (llm["backend"], llm["signed_in"], llm["auth_method"], llm["model"]) == (
            "claude-cli",
            True,
            "api_key_helper",
            "haiku",
        )

        # extraction: an implicit preference the offline extractor would not keep
        assert extract_explicit([(IMPLICIT, None)]) == []
        writer = new_session(world.roots, str(world.project))
        writer.user(IMPLICIT)
        writer.assistant("Noted, I will use pnpm.")
        ours = world.transcripts()
        r = c.post(
            "/v1/events/turn-end",
            json={
                "session_id": writer.session_id,
                "transcript_path": str(writer.path),
                "cwd": str(world.project),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            },
        )
        job = wait(c, f"/v1/jobs/{r.json()['job_id']}", lambda j: j["status"] not in ("queued", "running"))
        assert job["status"] == "done" and job["reason"].startswith("llm"), job
        listed = c.get("/v1/memories", params={"cwd": str(world.project)}).json()["memories"]
        assert [m["description"] for m in listed] == [PNPM["description"]]

        # session notes (free text through the CLI)
        notes = wait(c, f"/v1/sessions/{writer.session_id}/memory", lambda d: "Move to pnpm" in d.get("markdown", ""))
        assert "Lockfile switched." in notes["markdown"]

        # recall: the side-query through the CLI picks the memory
        c.post(
            "/v1/memories",
            json={
                "cwd": str(world.project),
                "name": "Coffee",
                "description": "The user likes flat whites",
                "type": "user",
                "body": "flat white",
            },
        )
        got = c.post(
            "/v1/recall",
            json={"cwd": str(world.project), "query": "which package manager do we use?", "session_id": "s-recall"},
        ).json()
        assert got["method"] == "llm" and [m["description"] for m in got["memories"]] == [PNPM["description"]], got

        # dream: a structured plan through the CLI
        run_id = c.post("/v1/dream/run", json={"cwd": str(world.project)}).json()["run_id"]
        runs = wait(
            c,
            f"/v1/dream/runs?cwd={world.project}",
            lambda d: any(r["run_id"] == run_id and r["status"] != "running" for r in d["runs"]),
        )
        run = next(r for r in runs["runs"] if r["run_id"] == run_id)
        assert run["status"] == "done" and run["method"] == "llm", run

        status = c.get("/v1/status").json()
        spend = status["llm_usage"]["by_backend"]["claude-cli"]
        assert {"extract", "session_memory", "recall", "dream"} <= set(spend)
        assert spend["extract"]["input_tokens"] >= 900 and spend["extract"]["output_tokens"] >= 80
        assert 'backend="claude-cli",direction="input",purpose="extract"' in c.get("/metrics").text
        assert status["llm"]["last_call"]["outcome"] == "ok"

    # sealed off: no hook fired, no transcript left, no CLAUDE.md or auto memory sent, no tools but the answer
    assert not world.hook_log.exists(), world.hook_log.read_text()
    assert world.transcripts() == ours
    sent = "\n".join(world.api.texts_sent())
    assert "CLAUDE-MD-MARKER" not in sent and "auto memory" not in sent.lower()
    for body in world.api.requests:
        # StructuredOutput carries the answer; the placeholder is the CLI's empty slot for deferred tools (none here)
        assert {t["name"] for t in body.get("tools") or []} <= {"StructuredOutput", "DeferredToolPlaceholder"}
        assert body["model"] == "claude-haiku-4-5" or "haiku" in body["model"]
    assert sum("You extract durable memories" in system_text(b) for b in world.api.requests) == 1


def _cli_client(tmp: Path, claude: Path, api: ScriptedMessagesAPI, *, signed_in: bool, cap: int = 0) -> LLMClient:
    home = tmp / "user"
    (home / ".claude").mkdir(parents=True)
    if signed_in:
        (home / ".claude" / "settings.json").write_text(json.dumps({"apiKeyHelper": "echo sk-ant-helper-key"}))
    env = {**daemon_env(tmp / "memoryd"), "HOME": str(home), "ANTHROPIC_BASE_URL": api.url}
    backend = ClaudeCLIBackend(
        binary=str(claude), model="haiku", workdir=tmp / "memoryd" / "llm-cwd", max_queue=1, env=env
    )
    meter = UsageMeter(StateDB(tmp / "state.db"), Metrics(), daily_cap=cap, now=SYSTEM_CLOCK.now)
    client = LLMClient(backend=backend if backend.signed_in() else None, meter=meter, timeout_seconds=60)
    client._sleep = lambda s: None  # the backoff's clock, not its policy
    return client


def test_cli_529_is_retried_by_memoryds_policy_and_the_cap_holds(tmp_path: Path, claude_bin: Path) -> None:  # noqa: F811
    with ScriptedMessagesAPI() as api:
        llm = _cli_client(tmp_path, claude_bin, api, signed_in=True, cap=50)
        api.push(
            Reply(status=529), Reply(tool_input={"selected_memories": ["user_a.md"]}, input_tokens=40, output_tokens=20)
        )
        result = llm.complete(purpose="extract", system="pick", user="q", schema=RecallSelection)
        assert result.data.selected_memories == ["user_a.md"] and result.backend == "claude-cli"
        assert len(api.requests) == 2  # the CLI itself did not retry (CLAUDE_CODE_MAX_RETRIES=0): memoryd did, once
        with pytest.raises(TokenBudgetExceeded):
            llm.complete(purpose="extract", system="pick", user="q", schema=RecallSelection)
        assert len(api.requests) == 2 and "cap of 50 reached" in llm.status()["status_line"]


def test_a_claude_that_is_not_signed_in_leaves_memoryd_offline(tmp_path: Path, claude_bin: Path) -> None:  # noqa: F811
    with ScriptedMessagesAPI() as api:
        llm = _cli_client(tmp_path, claude_bin, api, signed_in=False)
        assert not llm.enabled and api.requests == []
