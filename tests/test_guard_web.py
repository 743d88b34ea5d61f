"""The memory page shows what a memory forbids and lets a person edit or remove it (issue 50), through the one
write path over the version the page showed: the body, the description and every other key stay as written."""

from __future__ import annotations

from pathlib import Path

from memoryd.store.frontmatter import split_frontmatter
from tests.conftest import LiveDaemon
from tests.test_ui import login, pid, version_of


def test_a_person_edits_and_removes_the_rule_on_the_memory_page(live: LiveDaemon, project: Path) -> None:
    r = live.client.post(
        "/v1/memories",
        json={
            "cwd": str(project),
            "name": "Package manager",
            "type": "feedback",
            "description": "Use pnpm, never npm",
            "body": "The lockfile is pnpm-lock.yaml.",
            "applies_to": {"paths": ["package.json"]},
        },
    )
    filename = r.json()["filename"]
    store = live.daemon.stores.for_cwd(str(project))
    browser, csrf = login(live)
    path = f"/ui/p/{pid(live, project)}/m/{filename}"
    page = browser.get(path).text
    assert "Holds these acts" in page and "<code>npm</code>" in page and "use pnpm" in page
    own = {"origin": live.url}
    form = {
        "csrf": csrf,
        "version": version_of(page, 'class="forbid"'),
        "commands": "npm\r\nyarn\r\n!yarn add left-pad\r\n",
        "creates": "legacy/**\r\n",
        "instead": "use pnpm",
    }
    stale = {**form, "version": "0" * 16}
    assert browser.post(f"{path}/forbid", data=stale, headers=own).status_code == 409
    assert split_frontmatter(store.read_raw(filename) or "")[0]["forbid"]["commands"] == ["npm", "npx"]
    r = browser.post(f"{path}/forbid", data=form, headers=own)
    assert r.status_code == 303, r.text
    meta, body = split_frontmatter(store.read_raw(filename) or "")
    commands = ["npm", "yarn", "!yarn add left-pad"]
    assert meta["forbid"] == {"commands": commands, "creates": ["legacy/**"], "instead": "use pnpm"}
    shown = browser.get(path).text
    assert "New files it must not create" in shown and "<code>legacy/**</code>" in shown
    assert "not <code>yarn add left-pad</code>" in shown
    assert meta["applies_to"] == {"paths": ["package.json"]} and body.strip() == "The lockfile is pnpm-lock.yaml."
    bad = {**form, "version": store.get(filename).version, "writes": "/etc/passwd"}
    r = browser.post(f"{path}/forbid", data=bad, headers=own)
    assert r.status_code == 400 and "must be a glob relative to the project" in r.text
    r = browser.post(f"{path}/forbid", data={**bad, "writes": "", "commands": "npm\r\n!\r\n"}, headers=own)
    assert r.status_code == 400 and "forbid.commands: &#39;!&#39; keeps nothing out" in r.text
    hook = {"hook_event_name": "PreToolUse", "session_id": "s-1", "cwd": str(project), "tool_name": "Bash"}
    held = live.client.post("/v1/hooks/claude-code", json={**hook, "tool_input": {"command": "yarn add x"}}).json()
    assert held["hookSpecificOutput"]["permissionDecision"] == "deny"
    kept = live.client.post("/v1/hooks/claude-code", json={**hook, "tool_input": {"command": "yarn add left-pad"}})
    assert "permissionDecision" not in (kept.json().get("hookSpecificOutput") or {})
    new_file = {"file_path": str(project / "legacy" / "x.ts"), "content": "x"}
    created = live.client.post("/v1/hooks/claude-code", json={**hook, "tool_name": "Write", "tool_input": new_file})
    assert "creates the new file legacy/x.ts" in created.json()["hookSpecificOutput"]["permissionDecisionReason"]
    activity = browser.get("/ui/activity").text  # the live page: the act, the memory, the decision
    assert "held (deny)" in activity and "Bash: yarn add x" in activity and filename in activity
    removed = {"csrf": csrf, "version": store.get(filename).version, "remove": "1"}
    assert browser.post(f"{path}/forbid", data=removed, headers=own).status_code == 303
    meta, _ = split_frontmatter(store.read_raw(filename) or "")
    assert meta["forbid"] == {} and "holds no act" in browser.get(path).text
    out = live.client.post("/v1/hooks/claude-code", json={**hook, "tool_input": {"command": "npm i"}}).json()
    assert "permissionDecision" not in (out.get("hookSpecificOutput") or {})
