"""A program on memoryd's port cannot hold, flood or read memoryd's clients (issues #52 and #51): the CLI, the
hook command and `memoryd mcp`, each a real subprocess against a real socket server, fail within their deadline
with one line, in bounded memory, and send nothing of a request before the program proves it is memoryd."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.integrations.hook_protocol import HOOK_EVENTS
from tests.support.hostile_peers import (
    Behaviour,
    ClientRun,
    HostilePeer,
    HttpServerOnPort,
    drip,
    endless_chunk_size,
    endless_chunks,
    mcp_answer,
    mcp_call,
    plain_answer,
    run_client,
)
from tests.support.servers import DaemonProcess
from tests.support.strangers import StrangerServer
from tests.test_hook_command import context, event, hook_env

# The real CLI, hook and MCP server as subprocesses against hostile socket servers, each waiting out its own
# deadline (up to 6 s a test): end-to-end, so CI runs them after the fast suite.
pytestmark = pytest.mark.e2e

STRANGERS: dict[str, Behaviour] = {"drip": drip, "endless chunks": endless_chunks, "endless size": endless_chunk_size}
SAVED_TEXT = "the staging database password rotates on Fridays"
# hang detectors, far past each client's deadline (its proof: CLIENT_PROOF_SECONDS; the hook: its event's budget)
CLI_HANG_SECONDS = 15.0
MAX_RSS_MB = 200  # a client holds ~30-80 MB; an unbounded answer took them to 1.5 GB


def stranger_home(tmp_path: Path, port: int, *, token: bool = True) -> Path:
    """A home whose daemon.json names a live pid (this test's) and the stranger's port."""
    home = tmp_path / "home"
    home.mkdir()
    if token:
        (home / "token").write_text("token-of-this-user\n")
        os.chmod(home / "token", 0o600)
    (home / "daemon.json").write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1", "port": port}))
    return home


def one_line(run: ClientRun) -> str:
    """The client's error line: exactly one, and no traceback."""
    text = (run.stdout + run.stderr).strip()
    assert "Traceback" not in text, text[-2000:]
    assert len(text.splitlines()) == 1, text[-2000:]
    return text


def stranger_line(port: int) -> str:
    return f"something other than memoryd answers on port {port}"


@pytest.mark.parametrize("name", STRANGERS)
def test_the_cli_fails_fast_with_one_line(tmp_path: Path, project: Path, name: str) -> None:
    with HostilePeer(STRANGERS[name]) as peer:
        env = hook_env(stranger_home(tmp_path, peer.port), tmp_path / "user")
        run = run_client(["list", "--cwd", str(project)], env)
    assert run.returncode == 3 and stranger_line(peer.port) in one_line(run)
    assert run.seconds < CLI_HANG_SECONDS and run.max_rss_mb < MAX_RSS_MB, run


@pytest.mark.parametrize("name", STRANGERS)
@pytest.mark.parametrize("hook_event", ["SessionStart", "PreToolUse"])
def test_the_hook_gives_up_within_its_budget(tmp_path: Path, project: Path, name: str, hook_event: str) -> None:
    with HostilePeer(STRANGERS[name]) as peer:
        env = hook_env(stranger_home(tmp_path, peer.port), tmp_path / "user")
        fields = {"source": "startup"} if hook_event == "SessionStart" else {"tool_name": "Bash", "tool_input": {}}
        run = run_client(["hook", "claude-code"], env, stdin=json.dumps(event(project, hook_event, **fields)).encode())
    budget = HOOK_EVENTS[hook_event][0]
    assert run.returncode == 0 and run.stderr == "", run
    assert run.seconds < budget + 5 and run.max_rss_mb < MAX_RSS_MB, run
    if hook_event == "SessionStart":
        assert f"127.0.0.1:{peer.port}" in context(run.stdout) and "did not prove" in context(run.stdout)
    else:
        assert run.stdout == ""


@pytest.mark.parametrize("name", STRANGERS)
def test_the_mcp_server_answers_the_call_with_one_line(tmp_path: Path, project: Path, name: str) -> None:
    with HostilePeer(STRANGERS[name]) as peer:
        env = hook_env(stranger_home(tmp_path, peer.port), tmp_path / "user")
        call = mcp_call("memory_recall", {"query": "which package manager?", "cwd": str(project)})
        run = run_client(["mcp"], env, stdin=call, answered=b'"id":2')
    answer = mcp_answer(run.stdout)
    assert answer.get("isError") is True, run
    text = answer["content"][0]["text"]
    assert stranger_line(peer.port) in text and "\n" not in text
    assert run.seconds < CLI_HANG_SECONDS and run.max_rss_mb < MAX_RSS_MB, run


def test_without_a_token_nothing_of_a_save_reaches_the_stranger(tmp_path: Path, project: Path) -> None:
    with HostilePeer(plain_answer) as peer:
        env = hook_env(stranger_home(tmp_path, peer.port, token=False), tmp_path / "user")
        save = ["save", "-t", "project", "-n", "staging db", "-d", "when it rotates", "-b", SAVED_TEXT]
        cli = run_client([*save, "--cwd", str(project)], env)
        call = mcp_call(
            "memory_save",
            {
                "type": "project",
                "name": "staging db",
                "description": "rotates",
                "body": SAVED_TEXT,
                "cwd": str(project),
            },
        )
        mcp = run_client(["mcp"], env, stdin=call, answered=b'"id":2')
        received = peer.received()
    assert cli.returncode == 3 and stranger_line(peer.port) in one_line(cli)
    assert mcp_answer(mcp.stdout).get("isError") is True and "Traceback" not in mcp.stdout + mcp.stderr
    assert received.startswith(b"GET /v1/health") and SAVED_TEXT.encode() not in received
    assert b"POST" not in received and b"Authorization" not in received


def test_without_a_token_a_program_that_answers_like_memoryd_gets_nothing(tmp_path: Path, project: Path) -> None:
    """A guessed proof cannot be checked without a token: the client sends nothing and says which fix applies."""
    with StrangerServer() as stranger:
        env = hook_env(stranger_home(tmp_path, stranger.port, token=False), tmp_path / "user")
        run = run_client(["save", "-t", "project", "-n", "n", "-d", "d", "-b", SAVED_TEXT, "--cwd", str(project)], env)
    assert run.returncode == 1 and "MEMORYD_HOME" in one_line(run) and "nothing was sent" in run.stderr
    assert [h.get("X-Memoryd-Challenge") is not None for h in stranger.seen] == [True]


def test_without_a_token_the_real_daemon_names_the_fix(shared_daemon: DaemonProcess, tmp_path: Path) -> None:
    home = tmp_path / "other-home"
    home.mkdir()
    port = shared_daemon.url.rsplit(":", 1)[1]
    run = run_client(["status"], hook_env(home, tmp_path / "user", MEMORYD_PORT=port))
    assert run.returncode == 1 and "answers like memoryd" in one_line(run) and "MEMORYD_TOKEN" in run.stderr


@pytest.mark.parametrize(
    "command",
    [["status"], ["list"], ["save", "-t", "project", "-n", "n", "-d", "d", "-b", SAVED_TEXT], ["list", "--json"]],
)
def test_another_program_on_the_port_gets_one_line_naming_the_port(
    tmp_path: Path, project: Path, command: list[str]
) -> None:
    """Issue #51: `python3 -m http.server` left on memoryd's port, before memoryd ever ran (no token)."""
    with HttpServerOnPort(tmp_path / "www") as server:
        env = hook_env(tmp_path / "home", tmp_path / "user", MEMORYD_PORT=str(server.port))
        run = run_client([*command, "--cwd", str(project)], env)
    assert run.returncode == 3, run
    if "--json" in command:
        error = json.loads(run.stdout)["error"]
        assert error["code"] == "not_memoryd" and run.stderr == ""
        line = error["message"]
    else:
        line = one_line(run)
    assert stranger_line(server.port) in line and "MEMORYD_PORT" in line and "[server] port" in line
    assert not any(html in line for html in ("<", "DOCTYPE", "Error code", "File not found", "SimpleHTTP"))


def test_doctor_names_the_port_and_the_fix(tmp_path: Path, project: Path) -> None:
    (tmp_path / "user").mkdir()
    with HttpServerOnPort(tmp_path / "www") as server:
        env = hook_env(tmp_path / "home", tmp_path / "user", MEMORYD_PORT=str(server.port))
        plain = run_client(["doctor", "--cwd", str(project)], env)
        as_json = run_client(["doctor", "--json", "--cwd", str(project)], env)
    daemon = next(c for c in json.loads(as_json.stdout)["checks"] if c["name"] == "daemon")
    assert not daemon["ok"] and f"port {server.port}" in daemon["detail"]
    assert "MEMORYD_PORT" in daemon["fix"] and "[server] port" in daemon["fix"] and "log" not in daemon["fix"]
    assert f"port {server.port}" in plain.stdout and "daemon's log" not in plain.stdout
    assert not any(html in plain.stdout + as_json.stdout for html in ("DOCTYPE", "Error code", "SimpleHTTP"))


def test_the_proof_answer_is_bounded_below_what_memoryd_sends(shared_daemon: DaemonProcess) -> None:
    """The real daemon's answer to the challenge fits the proof's byte limit many times over."""
    with shared_daemon.client() as c:
        r = c.get("/v1/health", headers={"X-Memoryd-Challenge": "ab" * 16})
    head = sum(len(k) + len(v) + 4 for k, v in r.headers.items()) + 20
    assert head + len(r.content) < limits.CLIENT_PROOF_MAX_BYTES // 16
