"""`memoryd hook claude-code`, the plugin's one hook command, as a real subprocess against a real daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.cli.hook import DOWN_NOTE
from tests.support.servers import DaemonProcess


def run_hook(env: dict[str, str], payload: dict[str, Any] | str) -> subprocess.CompletedProcess[str]:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "memoryd", "hook", "claude-code"],
        input=body,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def hook_env(home: Path, user_home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "ANTHROPIC_", "CLAUDE"))}
    return {**env, "MEMORYD_HOME": str(home), "HOME": str(user_home), **extra}


def context(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out.strip() else ""


def event(project: Path, name: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": str(uuid.uuid4()), "cwd": str(project), "hook_event_name": name, **fields}


def test_forwards_the_event_and_prints_the_daemons_answer(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    with shared_daemon.client() as c:
        r = c.post(
            "/v1/memories",
            json={
                "cwd": str(project),
                "name": "pnpm",
                "type": "project",
                "description": "use pnpm, never npm: the lockfile is pnpm-lock.yaml",
                "body": "pnpm only.",
            },
        )
        assert r.status_code in (200, 201), r.text
    env = hook_env(shared_daemon.home, tmp_path / "user")
    start = run_hook(env, event(project, "SessionStart", source="startup"))
    assert (
        start.returncode == 0 and limits.INJECTED_MARKER in context(start.stdout) and "pnpm" in context(start.stdout)
    ), start.stderr
    recalled = run_hook(env, event(project, "UserPromptSubmit", prompt="which package manager, npm or pnpm?"))
    assert recalled.returncode == 0 and "pnpm only." in context(recalled.stdout), recalled.stderr
    # Events whose answer Claude Code ignores print nothing.
    assert run_hook(env, event(project, "SessionEnd", reason="other")).stdout == ""
    assert shared_daemon.token not in start.stdout + start.stderr + recalled.stdout + recalled.stderr


def test_a_stopped_daemon_is_said_once_at_session_start_and_never_blocks(tmp_path: Path, project: Path) -> None:
    env = hook_env(tmp_path / "no-daemon", tmp_path / "user")
    t = time.monotonic()
    start = run_hook(env, event(project, "SessionStart", source="startup"))
    assert start.returncode == 0 and context(start.stdout) == DOWN_NOTE
    prompt = run_hook(env, event(project, "UserPromptSubmit", prompt="hello"))
    assert prompt.returncode == 0 and prompt.stdout == ""  # once per session, not on every prompt
    for junk in ("not json", "[]", '{"hook_event_name": "NoSuchEvent"}'):
        r = run_hook(env, junk)
        assert (r.returncode, r.stdout) == (0, "")
    assert time.monotonic() - t < 15


def test_a_wrong_token_is_never_sent_and_nothing_is_printed_but_a_note(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    secret = "wrong-token-" + uuid.uuid4().hex
    env = hook_env(shared_daemon.home, tmp_path / "user", MEMORYD_TOKEN=secret)
    start = run_hook(env, event(project, "SessionStart", source="startup"))
    assert start.returncode == 0 and "did not prove" in context(start.stdout)
    prompt = run_hook(env, event(project, "UserPromptSubmit", prompt="which package manager should I use?"))
    assert (prompt.returncode, prompt.stdout) == (0, "")
    assert secret not in start.stdout + start.stderr and shared_daemon.token not in start.stdout + start.stderr


def test_settings_file_hooks_and_the_plugin_never_both_answer(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    """Both run the forwarder for one event; the daemon answers the first and gives the repeat nothing. A repo's
    committed hook that merely names memoryd's endpoint silences nothing."""
    user_home = tmp_path / "user"
    env = hook_env(shared_daemon.home, user_home)
    install = subprocess.run(
        [sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, capture_output=True, text=True, timeout=30
    )
    assert install.returncode == 0, install.stderr
    (project / ".claude").mkdir(exist_ok=True)
    echo = {"type": "command", "command": f"echo {shared_daemon.url}/v1/hooks/claude-code"}
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [echo]}]}}))
    payload = event(project, "SessionStart", source="startup")
    answers = [context(run_hook(env, payload).stdout) for _ in range(2)]
    assert limits.INJECTED_MARKER in answers[0] and answers[1] == ""
    fresh = event(project, "SessionStart", source="startup")
    assert limits.INJECTED_MARKER in context(run_hook(env, fresh).stdout)  # another session is answered
