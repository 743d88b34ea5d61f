"""Claude Code hooks through the real endpoint, the settings block, and the session-to-session loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.integrations.claude_code import hook_command, hooks_block, install_hooks, settings_path, uninstall_hooks
from memoryd.integrations.claude_code_hooks import fit_session_context, session_notes_context
from tests.conftest import LiveDaemon
from tests.support.clock import POLL_SECONDS, step_over_settle
from tests.support.transcripts import new_session


def hook(live: LiveDaemon, payload: dict[str, Any]) -> dict[str, Any]:
    r = live.client.post("/v1/hooks/claude-code", json=payload)
    assert r.status_code == 200, r.text
    return r.json()


def context(answer: dict[str, Any]) -> str:
    return str(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_two_sessions_learn_and_recall_offline(live: LiveDaemon, project: Path) -> None:
    root = live.daemon.settings.transcript_roots[0]
    s1 = new_session(root, str(project))
    base = {"session_id": s1.session_id, "transcript_path": str(s1.path), "cwd": str(project)}
    start = hook(live, {**base, "hook_event_name": "SessionStart", "source": "startup"})
    assert "(No memories saved yet.)" in context(start) and limits.INJECTED_MARKER in context(start)
    prompt = "Remember: always use pnpm, never npm, because our lockfile is pnpm-lock.yaml."
    assert hook(live, {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}) == {}
    s1.user(prompt)
    s1.assistant("Understood, pnpm it is.")
    assert (
        hook(
            live,
            {
                **base,
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": "Understood, pnpm it is.",
            },
        )
        == {}
    )
    s1.user("I'm a backend engineer; from now on, keep answers short.")
    s1.assistant("Will do.")
    assert hook(live, {**base, "hook_event_name": "Stop", "stop_hook_active": False}) == {}
    step_over_settle(live.daemon)  # the two turn-ends' one job is due now
    deadline = time.monotonic() + 30
    while len(live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]) < 3:
        assert time.monotonic() < deadline, "extraction did not write the memories"
        time.sleep(POLL_SECONDS)
    assert hook(live, {**base, "hook_event_name": "SessionEnd", "reason": "other"}) == {}

    s2 = new_session(root, str(project))
    base2 = {"session_id": s2.session_id, "transcript_path": str(s2.path), "cwd": str(project)}
    index = context(hook(live, {**base2, "hook_event_name": "SessionStart", "source": "startup"}))
    assert "pnpm" in index and "backend engineer" in index.lower()
    recalled = context(
        hook(
            live,
            {
                **base2,
                "hook_event_name": "UserPromptSubmit",
                "prompt": "which package manager do we use here, npm or pnpm?",
            },
        )
    )
    assert (
        "pnpm" in recalled and "<system-reminder>" in recalled and len(recalled) <= limits.CLAUDE_CODE_CONTEXT_MAX_CHARS
    )
    # Session 2's transcript echoes the recall: it must not be re-extracted as the user's words.
    s2.user(f"{recalled}\nok thanks")
    s2.assistant("Sure.")
    before = {
        m["filename"]: m["mtime"]
        for m in live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
    }
    hook(live, {**base2, "hook_event_name": "Stop"})
    step_over_settle(
        live.daemon
    )  # its job is due now: the half second below sees it run, not still wait out its settle
    time.sleep(0.5)
    after = {
        m["filename"]: m["mtime"]
        for m in live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
    }
    assert after == before


def test_unknown_and_broken_hooks_answer_empty(live: LiveDaemon, project: Path) -> None:
    assert hook(live, {"hook_event_name": "Notification", "cwd": str(project)}) == {}
    assert hook(live, {"hook_event_name": "UserPromptSubmit"}) == {}  # no cwd/session: nothing, no error
    assert (
        hook(
            live, {"hook_event_name": "Stop", "session_id": "s", "cwd": str(project), "transcript_path": "/etc/passwd"}
        )
        == {}
    )  # refused, fails open
    assert hook(live, {"hook_event_name": "PreCompact", "session_id": "nope"}) == {}
    assert "decision" not in json.dumps(
        hook(live, {"hook_event_name": "SubagentStop", "session_id": "s", "cwd": str(project)})
    )


def test_session_notes_head_is_cut_on_a_line_at_its_share() -> None:
    cap = limits.SESSION_NOTES_CONTEXT_MAX_CHARS
    small = session_notes_context("# Session Title\nshort")
    assert small.endswith("# Session Title\nshort\n") and "cut" not in small
    notes = "\n".join(f"- line {i} " + "n" * 80 for i in range(200))
    head = session_notes_context(notes)
    assert len(head) <= cap and "[… notes cut" in head and "- line 0 " in head
    assert all(
        line.startswith(("- line", "[…", "Session notes", limits.INJECTED_MARKER)) or not line
        for line in head.splitlines()
    )


def test_session_context_fits_the_cap() -> None:
    prompt = "# Memory\n" + "\n".join(f"- [Entry {i}](feedback_e{i}.md) — " + "x" * 120 for i in range(200))
    text = fit_session_context(prompt)
    assert len(text) <= limits.CLAUDE_CODE_CONTEXT_MAX_CHARS
    assert text.startswith(limits.INJECTED_MARKER) and "- [Entry 0]" in text and "memoryd index" in text


def test_install_merges_is_idempotent_and_uninstalls_only_ours(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    theirs = {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    path.write_text(json.dumps(theirs))
    block = hooks_block(hook_command(tmp_path / "mhome", "memoryd"))
    first = install_hooks(path, block)
    assert first["changed"] and Path(first["backup"]).exists()
    data = json.loads(path.read_text())
    assert (
        data["model"] == "opus"
        and len(data["hooks"]["Stop"]) == 2
        and set(data["hooks"]) >= {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact", "SessionEnd"}
    )
    assert data["hooks"]["PreToolUse"][0]["matcher"] == "Bash|Edit|Write|MultiEdit|NotebookEdit|Read"
    # An older install's curl hooks are memoryd's too: a new install replaces them.
    old = {"type": "command", "command": "curl -sS -H @'/h' --data-binary @- http://127.0.0.1:1/v1/hooks/claude-code"}
    path.write_text(json.dumps({**theirs, "hooks": {**theirs["hooks"], "UserPromptSubmit": [{"hooks": [old]}]}}))
    install_hooks(path, block)
    assert "curl" not in path.read_text()
    assert not install_hooks(path, block)["changed"]  # idempotent
    assert uninstall_hooks(path)["changed"]
    assert json.loads(path.read_text()) == theirs
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    try:
        install_hooks(bad, block)
        raise AssertionError("invalid settings must be refused")
    except Exception as exc:
        assert "not valid JSON" in str(exc) and bad.read_text() == "{oops"


def test_settings_path_scopes(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert settings_path("user", tmp_path, env) == tmp_path / ".claude" / "settings.json"
    assert (
        settings_path("user", tmp_path, {**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
        == tmp_path / "cfg" / "settings.json"
    )
    assert settings_path("local", tmp_path / "p", env) == tmp_path / "p" / ".claude" / "settings.local.json"


def test_cli_install_writes_the_forwarder_command_which_fails_open(tmp_path: Path) -> None:
    home, user_home = tmp_path / "mhome", tmp_path / "user"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "CLAUDE"))},
        "MEMORYD_HOME": str(home),
        "HOME": str(user_home),
        "MEMORYD_PORT": "1",
    }
    out = subprocess.run(
        [sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, capture_output=True, text=True, check=True
    )
    assert "installed memoryd hooks" in out.stdout
    assert not (home / "curl-auth-header").exists()  # no token file beside the token: the forwarder reads the token
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert (home / "token").read_text().strip() not in command  # the token never sits on a command line
    assert command.endswith("hook claude-code") and f"MEMORYD_HOME={home}" in command
    http = subprocess.run(
        [sys.executable, "-m", "memoryd", "hooks", "--install", "--type", "http"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert http.returncode == 2 and "unproved" in http.stderr
    # The daemon is down (port 1): the hook exits 0 with no output, quickly.
    t = time.monotonic()
    run = subprocess.run(
        ["sh", "-c", command],
        input='{"hook_event_name":"UserPromptSubmit","prompt":"hi"}',
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and run.stdout == "" and time.monotonic() - t < 5
    again = subprocess.run(
        [sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, capture_output=True, text=True, check=True
    )
    assert "already installed" in again.stdout
    subprocess.run(
        [sys.executable, "-m", "memoryd", "hooks", "--uninstall"], env=env, capture_output=True, text=True, check=True
    )
    assert "hooks" not in json.loads((user_home / ".claude" / "settings.json").read_text())


def test_stop_updates_session_notes_that_precompact_serves(live: LiveDaemon, project: Path) -> None:
    root = live.daemon.settings.transcript_roots[0]
    s = new_session(root, str(project))
    s.user("Refactor the billing module to use the new invoice API")
    for i in range(12):  # past the 10,000-token first-write threshold
        s.assistant(
            f"Step {i}: reading the billing code. " + "details " * 450,
            tools=[("Read", {"file_path": f"/src/billing/mod{i}.py"})],
        )
        s.tool_result("def charge(): ...\n" * 20)
    s.assistant("Done with the refactor.")
    base = {"session_id": s.session_id, "transcript_path": str(s.path), "cwd": str(project)}
    assert hook(live, {**base, "hook_event_name": "Stop"}) == {}
    deadline = time.monotonic() + 30
    while (r := live.client.get(f"/v1/sessions/{s.session_id}/memory")).status_code != 200:
        assert r.status_code == 404 and time.monotonic() < deadline, r.text
        time.sleep(0.1)
    notes = r.json()["markdown"]
    assert "# Task specification" in notes and "billing" in notes
    compact = context(hook(live, {**base, "hook_event_name": "PreCompact", "trigger": "auto"}))
    assert compact.startswith(limits.INJECTED_MARKER) and "# Worklog" in compact
    # After the compaction Claude Code starts the session again (source=compact): the notes lead,
    # cut to their share, and the memory index follows, all within the 10,000-char cap.
    save = {
        "cwd": str(project),
        "type": "project",
        "name": "Invoice API",
        "description": "billing moves to the invoice API v2",
        "body": "v2",
    }
    assert live.client.post("/v1/memories", json=save).status_code == 201
    resumed = context(hook(live, {**base, "hook_event_name": "SessionStart", "source": "compact"}))
    assert resumed.startswith(limits.INJECTED_MARKER) and "Session notes kept by memoryd" in resumed
    assert "# Task specification" in resumed and "invoice API v2" in resumed
    assert len(resumed) <= limits.CLAUDE_CODE_CONTEXT_MAX_CHARS and resumed.index(
        "# Task specification"
    ) < resumed.index("invoice API v2")
    fresh = context(hook(live, {**base, "hook_event_name": "SessionStart", "source": "startup"}))
    assert "Session notes" not in fresh and "invoice API v2" in fresh
    odd = context(
        hook(live, {**base, "session_id": "../../etc", "hook_event_name": "SessionStart", "source": "compact"})
    )
    assert "invoice API v2" in odd and "Session notes" not in odd  # a bad id never costs the index
