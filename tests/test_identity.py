"""The token goes only to this user's memoryd (issue #41): a program on memoryd's port, or one relaying to the
real daemon from another port, never sees it, and nothing it answers reaches the agent or the CLI's output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.base.identity import CHALLENGE_HEADER, PROOF_HEADER, proof, proves
from tests.support.servers import DaemonProcess
from tests.support.strangers import INJECTION, Relay, StrangerServer
from tests.test_hook_command import context, event, hook_env, run_hook


def home_pointing_at(tmp_path: Path, port: int, token: str, pid: int | None = None) -> Path:
    """A memoryd home whose daemon.json names a live pid (this test's, unless given) and the given port."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "token").write_text(token + "\n")
    os.chmod(home / "token", 0o600)
    (home / "daemon.json").write_text(json.dumps({"pid": pid or os.getpid(), "host": "127.0.0.1", "port": port}))
    return home


@pytest.mark.parametrize("pid", [None, 1])  # this process, or pid 1: live pids that are not memoryd
def test_the_hook_sends_no_token_to_a_stranger_and_prints_none_of_its_answer(
    project: Path, tmp_path: Path, pid: int | None
) -> None:
    with StrangerServer() as stranger:
        home = home_pointing_at(tmp_path, stranger.port, "secret-token-of-this-user", pid)
        env = hook_env(home, tmp_path / "user")
        tool = event(project, "PreToolUse", tool_name="Bash", tool_input={"command": "npm install lodash"})
        for payload in (tool, event(project, "UserPromptSubmit", prompt="which package manager should I use?")):
            r = run_hook(env, payload)
            assert (r.returncode, r.stdout) == (0, "") and INJECTION not in r.stderr
        start = run_hook(env, event(project, "SessionStart", source="startup"))
        assert f"127.0.0.1:{stranger.port}" in context(start.stdout) and INJECTION not in start.stdout
        assert stranger.seen and not stranger.tokens_seen()  # asked to prove itself, never given the token


@pytest.mark.parametrize("command", [["status"], ["list"], ["recall", "which package manager should I use?"]])
def test_the_cli_sends_no_token_to_a_stranger_and_says_what_answers(
    project: Path, tmp_path: Path, command: list[str]
) -> None:
    with StrangerServer() as stranger:
        env = hook_env(home_pointing_at(tmp_path, stranger.port, "secret-token-of-this-user"), tmp_path / "user")
        r = subprocess.run(
            [sys.executable, "-m", "memoryd", *command, "--cwd", str(project)],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 3, r.stdout + r.stderr
        assert "something other than memoryd answers" in r.stderr and INJECTION not in r.stdout + r.stderr
        assert not stranger.tokens_seen()


def test_a_relay_to_the_real_daemon_cannot_borrow_its_proof(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    with Relay(int(shared_daemon.url.rsplit(":", 1)[1])) as relay:
        home = home_pointing_at(tmp_path, relay.port, shared_daemon.token)
        r = run_hook(hook_env(home, tmp_path / "user"), event(project, "SessionStart", source="startup"))
        assert "did not prove" in context(r.stdout)
        assert relay.sent and all(shared_daemon.token.encode() not in chunk for chunk in relay.sent)


def test_the_daemon_proves_itself_only_for_the_address_it_was_reached_at(shared_daemon: DaemonProcess) -> None:
    port = int(shared_daemon.url.rsplit(":", 1)[1])
    with shared_daemon.client() as c:
        challenge = "ab" * 16
        answer = c.get("/v1/health", headers={CHALLENGE_HEADER: challenge}).headers[PROOF_HEADER]
        assert proves(shared_daemon.token, challenge, "127.0.0.1", port, answer)
        assert not proves(shared_daemon.token, challenge, "127.0.0.1", port + 1, answer)
        assert answer != proof("another-token", challenge, "127.0.0.1", port)
        assert PROOF_HEADER not in c.get("/v1/health", headers={CHALLENGE_HEADER: "not hex"}).headers
