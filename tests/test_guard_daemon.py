"""The guard through the real daemon over loopback (issue 50): a memory's `forbid:` holds the act it names with
deny or ask per mode, a compliant act goes on, `context` and `off` leave the act alone, MEMORYD_GUARD travels
with the session, the save proposes triggers and says so, and a held act lands in the recall log."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.integrations.claude_code_hooks import guard_line
from tests.conftest import LiveDaemon, make_settings, serve

PNPM = {"name": "Package manager", "description": "Use pnpm, never npm: the lockfile is pnpm-lock.yaml"}


@pytest.fixture
def daemon_of(home: Path) -> Iterator[Any]:
    """`daemon_of(mode)`: a live daemon whose [guard] mode is `mode`."""
    from memoryd.service.daemon import Daemon
    from tests.support.clock import SteppingClock

    stack: list[Any] = []

    def start(mode: str = "deny") -> LiveDaemon:
        settings = make_settings(home)
        settings.guard.mode = mode  # type: ignore[assignment]
        cm = serve(Daemon(settings, clock=SteppingClock()))
        stack.append(cm)
        return cm.__enter__()

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


def save(live: LiveDaemon, cwd: Path, **fields: Any) -> dict[str, Any]:
    body = {"cwd": str(cwd), "type": "feedback", "body": "", **fields}
    r = live.client.post("/v1/memories", json=body)
    assert r.status_code in (200, 201), r.text
    return dict(r.json())


def pre_tool(live: LiveDaemon, cwd: Path, tool: str, env: str | None = None, **tool_input: Any) -> dict[str, Any]:
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": str(uuid.uuid4()),
        "cwd": str(cwd),
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }
    headers = {"X-Claude-Code-Env": env} if env is not None else {}
    r = live.client.post("/v1/hooks/claude-code", json=payload, headers=headers)
    assert r.status_code == 200, r.text
    return dict(r.json().get("hookSpecificOutput") or {})


def test_save_proposes_the_trigger_and_says_so_and_the_act_is_denied_with_what_to_do(
    daemon_of: Any, project: Path
) -> None:
    live = daemon_of("deny")
    saved = save(live, project, **PNPM)
    assert saved["forbid"] == {"commands": ["npm", "npx"], "instead": "use pnpm"}
    assert saved["will_stop"] == "will stop: npm, npx — use pnpm" and saved["forbid_proposed"] is True
    out = pre_tool(live, project, "Bash", command="npm install lodash")
    assert out["permissionDecision"] == "deny"
    reason = out["permissionDecisionReason"]
    assert "run `pnpm add lodash`" in reason and saved["path"] in reason and "forbid:" in reason
    assert pre_tool(live, project, "Bash", command="pnpm add lodash").get("permissionDecision") is None
    assert pre_tool(live, project, "Bash", command="npx eslint .")["permissionDecision"] == "deny"
    held = live.client.get("/v1/recall/log", params={"cwd": str(project)}).json()
    entries = held["entries"] if isinstance(held, dict) else held
    guard = [e for e in entries if e["method"] == "guard"]
    assert guard and guard[0]["prompt"].startswith("Bash: npx eslint") and guard[0]["reason"].startswith("deny:")
    assert guard[0]["injected"][0]["filename"] == saved["filename"] and guard[0]["injected"][0]["held"] == "deny"


def test_ask_mode_asks_and_a_memory_enforce_overrides_the_mode(daemon_of: Any, project: Path) -> None:
    live = daemon_of("ask")
    save(live, project, **PNPM)
    assert pre_tool(live, project, "Bash", command="npm ci")["permissionDecision"] == "ask"
    save(
        live,
        project,
        name="Secrets stay unread",
        description="Never read .env.local; .env.example holds the names",
        forbid={"reads": [".env*", "!.env.example"], "enforce": "deny"},
    )
    assert pre_tool(live, project, "Read", file_path=str(project / ".env.local"))["permissionDecision"] == "deny"
    assert pre_tool(live, project, "Read", file_path=str(project / ".env.example")).get("permissionDecision") is None
    assert pre_tool(live, project, "Bash", command="git add .env.local")["permissionDecision"] == "deny"


def test_an_act_breaking_two_rules_names_both_and_the_strictest_decision_holds(daemon_of: Any, project: Path) -> None:
    """`npx eslint` under "use pnpm, never npm" and "lint with Biome, not eslint": the agent reads both rules, what
    each says to do instead and where to change each; a rule asking and one denying deny."""
    live = daemon_of("ask")
    save(live, project, **PNPM, forbid={"commands": ["npm", "npx"], "instead": "use pnpm"})
    save(
        live,
        project,
        name="Biome lints",
        description="Format and lint with Biome, not eslint",
        forbid={"commands": ["eslint"], "instead": "pnpm biome check --write", "enforce": "deny"},
    )
    out = pre_tool(live, project, "Bash", command="npx eslint --fix src")
    assert out["permissionDecision"] == "deny"
    why = out["permissionDecisionReason"]
    assert "Package manager" in why and "Biome lints" in why and "use pnpm" in why and "biome check" in why
    assert why.count("edit or remove `forbid:` in ") == 2
    assert pre_tool(live, project, "Bash", command="npm ci")["permissionDecision"] == "ask"


def test_context_mode_lets_the_act_run_with_the_rule_and_off_changes_nothing_else(
    daemon_of: Any, project: Path
) -> None:
    live = daemon_of("context")
    save(live, project, **PNPM)
    out = pre_tool(live, project, "Bash", command="npm install lodash")
    assert "permissionDecision" not in out and "memoryd held this act" in out["additionalContext"]
    off = daemon_of("off")
    out = pre_tool(off, project, "Bash", command="npm install lodash")
    assert "permissionDecision" not in out and "memoryd held" not in out.get("additionalContext", "")
    assert "Use pnpm, never npm" in out["additionalContext"]  # tool-time recall goes on as before the guard


def test_memoryd_guard_off_travels_with_the_session(daemon_of: Any, project: Path) -> None:
    live = daemon_of("deny")
    save(live, project, **PNPM)
    env = "CLAUDE_CODE_DISABLE_AUTO_MEMORY=;CLAUDE_CODE_SIMPLE=;MEMORYD_RECALL=;MEMORYD_GUARD=off"
    out = pre_tool(live, project, "Bash", env=env, command="npm install lodash")
    assert "permissionDecision" not in out and "Use pnpm, never npm" in out["additionalContext"]
    asked = pre_tool(live, project, "Bash", env=env.replace("=off", "=ask"), command="npm install lodash")
    assert asked["permissionDecision"] == "ask"


def test_writes_hold_changes_to_existing_files_never_a_new_one_and_only_new_imports_count(
    daemon_of: Any, project: Path
) -> None:
    live = daemon_of("deny")
    (project / "db" / "migrations").mkdir(parents=True)
    (project / "db" / "migrations" / "0001_users.sql").write_text("create table users();\n")
    save(
        live,
        project,
        name="Migrations are append-only",
        description="Never edit an applied migration in db/migrations/; add a new one",
    )
    edit = pre_tool(live, project, "Edit", file_path=str(project / "db/migrations/0001_users.sql"), old_string="a")
    assert edit["permissionDecision"] == "deny"
    new = pre_tool(live, project, "Write", file_path=str(project / "db/migrations/0002_x.sql"), content="x")
    assert new.get("permissionDecision") is None
    assert pre_tool(live, project, "Bash", command="rm db/migrations/0001_users.sql")["permissionDecision"] == "deny"
    save(live, project, name="Dates", description="Never use moment.js, use date-fns")
    added = pre_tool(
        live, project, "Edit", file_path=str(project / "a.ts"), old_string="x", new_string="import m from 'moment'"
    )
    assert added["permissionDecision"] == "deny" and "date-fns" in added["permissionDecisionReason"]
    kept = pre_tool(
        live,
        project,
        "Edit",
        file_path=str(project / "a.ts"),
        old_string="import m from 'moment'\nm()",
        new_string="import m from 'moment'\nm(1)",
    )
    assert kept.get("permissionDecision") is None


def test_a_person_removes_a_proposal_and_it_stays_removed(daemon_of: Any, project: Path) -> None:
    live = daemon_of("deny")
    saved = save(live, project, **PNPM)
    cleared = save(live, project, **PNPM, forbid={}, expected_version=saved["version"])
    assert cleared["forbid"] == {} and cleared["will_stop"] == ""
    again = save(live, project, **PNPM)  # a later save (extraction, the CLI) proposes nothing over a person's "none"
    assert again["forbid"] == {} and again["forbid_proposed"] is False
    assert pre_tool(live, project, "Bash", command="npm install lodash").get("permissionDecision") is None
    bad = {"cwd": str(project), **PNPM, "type": "feedback", "forbid": {"command": ["npm"]}}
    r = live.client.post("/v1/memories", json=bad)
    assert r.status_code == 422 and "forbid.command is not a field; use commands" in r.text


def test_session_start_says_how_many_rules_hold_acts(daemon_of: Any, project: Path) -> None:
    live = daemon_of("deny")
    save(live, project, **PNPM)
    event = {"hook_event_name": "SessionStart", "session_id": str(uuid.uuid4()), "cwd": str(project)}
    r = live.client.post("/v1/hooks/claude-code", json=event)
    assert guard_line(1) in r.json()["hookSpecificOutput"]["additionalContext"]
    # The plugin's and a settings file's hooks forward the same event: the second door adds nothing, not even the
    # line (Claude Code joins both answers, and the line came twice, once ahead of the index)
    assert live.client.post("/v1/hooks/claude-code", json=event).json() == {}
