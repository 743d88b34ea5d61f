"""#51 items 5 and 6, over real HTTP with real files in a temp HOME: one file style per folder whenever Claude Code
appeared, the title kept as `name`, status and SessionStart telling the folder's real naming, and the user's
global `user` memories opening every session within their budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.integrations.claude_memory import claude_memory_dir, describe, location_lines
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, serve
from tests.support.clock import SteppingClock

AUTO_MEMORY_OFF = "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1"


def hook(live: LiveDaemon, payload: dict[str, Any], env: str | None = None) -> str:
    headers = {"X-Claude-Code-Env": env} if env is not None else {}
    r = live.client.post("/v1/hooks/claude-code", json=payload, headers=headers)
    assert r.status_code == 200, r.text
    return str(r.json().get("hookSpecificOutput", {}).get("additionalContext", ""))


def save(live: LiveDaemon, cwd: Path, name: str, type_: str = "feedback", **extra: Any) -> dict[str, Any]:
    r = live.client.post(
        "/v1/memories",
        json={"cwd": str(cwd), "name": name, "description": f"{name}: d", "type": type_, "body": "b", **extra},
    )
    assert r.status_code in (200, 201), r.text
    return dict(r.json())


def start(live: LiveDaemon, cwd: Path, session: str, env: str | None = AUTO_MEMORY_OFF) -> str:
    return hook(
        live, {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(cwd), "session_id": session}, env
    )


def test_claude_codes_folder_gets_one_style_whenever_claude_code_appeared(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "memoryd"
    home.mkdir()
    settings = make_settings(home)
    with serve(Daemon(settings, clock=SteppingClock())) as live:  # started before ~/.claude existed
        (Path.home() / ".claude").mkdir()
        saved = save(live, project, "Package manager")
        cc_dir = claude_memory_dir(str(project), {"HOME": str(Path.home())})
        assert Path(saved["path"]) == cc_dir / "package-manager.md", saved
        text = Path(saved["path"]).read_text()
        # the title is kept as `name`, as Claude Code's own memory files have it; the type nested, as it reads it
        assert text.startswith("---\nname: Package manager\n") and "metadata:\n  type: feedback\n" in text, text
        assert "[Package manager](package-manager.md)" in (cc_dir / limits.INDEX_FILENAME).read_text()
        info = describe(settings, str(project), hooks_installed=True)
        assert info["dialect"] == "claude-code" and "dialect claude-code" in location_lines(info)[0]
        # with Claude Code's auto memory off memoryd gives the index, naming the files as this folder names them
        context = start(live, project, "s-cc")
        assert "`<slug>.md` in kebab case" in context and "<type>_<slug>.md" not in context, context
        assert "metadata:\n  type: feedback" in context

        # a folder of Claude Code's that holds memoryd's style: status says so, and a save keeps to it
        other = tmp_path / "other"
        (other / ".git").mkdir(parents=True)
        theirs = claude_memory_dir(str(other), {"HOME": str(Path.home())})
        theirs.mkdir(parents=True)
        for i in range(2):
            (theirs / f"user_note-{i}.md").write_text(f"---\nname: Note {i}\ndescription: d{i}\ntype: user\n---\nb\n")
        info = describe(settings, str(other), hooks_installed=True)
        assert info["dialect"] == "memoryd" and "dialect memoryd" in location_lines(info)[0]
        assert Path(save(live, other, "Deploy day", "project")["path"]).name == "project_deploy-day.md"
        context = start(live, other, "s-own")
        assert "`<type>_<slug>.md`" in context and "kebab" not in context


ANSWER_STYLE = {
    "name": "Answer style",
    "description": "I prefer short answers, a few lines, code first",
    "body": "Short answers: a few lines, code first, no summary at the end.",
}


def test_global_user_memories_open_every_session_within_their_budget(live: LiveDaemon, project: Path) -> None:
    r = live.client.post("/v1/memories", json={"cwd": str(project), **ANSWER_STYLE, "type": "user", "scope": "global"})
    assert r.status_code == 201, r.text
    save(live, project, "Release train", "project", scope="global")  # a global project memory: not "about you"
    for env in (AUTO_MEMORY_OFF, None):  # whether or not Claude Code loads the project's index itself
        context = start(live, project, f"s-{env}", env)
        assert ANSWER_STYLE["body"] in context and "Release train" not in context, context
        assert context.startswith(limits.INJECTED_MARKER)  # never read back as something the user said
    # already in the session: a prompt about it does not bring it twice
    prompt = {"hook_event_name": "UserPromptSubmit", "cwd": str(project), "session_id": "s-None"}
    assert ANSWER_STYLE["body"] not in hook(live, {**prompt, "prompt": "how should you format your answers to me?"})

    for i in range(40):  # many: the block keeps to its budget and says where the rest are
        body = f"Preference number {i}: " + "detail " * 30
        live.client.post(
            "/v1/memories",
            json={
                "cwd": str(project),
                "name": f"Pref {i}",
                "description": f"pref {i}",
                "type": "user",
                "body": body,
                "scope": "global",
            },
        ).raise_for_status()
    block = limits.INJECTED_MARKER + start(live, project, "s-many", None).split(limits.INJECTED_MARKER)[1]
    assert 0 < len(block) <= limits.USER_MEMORY_CONTEXT_MAX_CHARS and "memoryd list --global" in block, block
