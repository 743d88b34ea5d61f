"""The Claude Code plugin in this repository, with the real CLI: validate, add the repository
folder as a marketplace, install, inspect, run headless sessions through the plugin's hooks,
uninstall. What is asserted is what reaches the (scripted) model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.cli.hook import DOWN_NOTE
from memoryd.integrations.claude_plugin import MARKETPLACE_NAME, PLUGIN_ID
from tests.support.claude_cli import claude_binary, headless_env
from tests.support.messages_api import ScriptedMessagesAPI
from tests.support.servers import DaemonProcess, daemon_env

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]


def one_door_each(sent: str) -> bool:
    """The index arrived once, and at most one recall (the prompt's memories now arrive too, issue 38)."""
    index = sent.count("SessionStart hook additional context: " + limits.INJECTED_MARKER)
    return index == 1 and sent.count("UserPromptSubmit hook additional context:") <= 1


def first_prompt_request(api: ScriptedMessagesAPI, prompt: str) -> str:
    """Everything the model was given in the first request that carries `prompt`."""
    for body in api.requests:
        text = json.dumps(body)
        if prompt in text:
            return text
    raise AssertionError(f"no request carried {prompt!r}")


def test_plugin_from_the_repository_folder_connects_claude_code(tmp_path: Path) -> None:
    claude = str(claude_binary())
    user_home, home, project = tmp_path / "user", tmp_path / "memoryd", tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    user_home.mkdir()
    with ScriptedMessagesAPI() as api:
        api.default.text = "Understood."
        # `memoryd` on PATH, as `uv tool install` / `pipx install` put it: this checkout's venv.
        env = headless_env(user_home, home, api.url, path_first=Path(sys.executable).parent)
        # Claude Code's own auto memory off: what reaches the model then comes through memoryd's hooks only.
        env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"

        def cli(*args: str, cwd: Path = project) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
            )

        for target in (
            REPO,
            REPO / "memoryd" / "claude_code_plugin",
            REPO / "memoryd" / "claude_code_plugin" / "memoryd",
        ):
            r = cli(claude, "plugin", "validate", str(target))
            assert r.returncode == 0 and "Validation passed" in r.stdout, r.stdout + r.stderr
        assert cli(claude, "plugin", "marketplace", "add", str(REPO)).returncode == 0
        r = cli(claude, "plugin", "install", PLUGIN_ID)
        assert r.returncode == 0, r.stdout + r.stderr
        details = cli(claude, "plugin", "details", PLUGIN_ID).stdout
        assert "Hooks (7)" in details and "SessionStart" in details and "UserPromptSubmit" in details, details
        assert "MCP servers (1)  memoryd" in details, details
        [listed] = json.loads(cli(claude, "plugin", "list", "--json").stdout)
        assert (
            listed["id"] == PLUGIN_ID
            and listed["enabled"]
            and listed["mcpServers"]["memoryd"] == {"command": "memoryd", "args": ["mcp"]}
        )

        daemon = DaemonProcess(home=home, env=daemon_env(home, HOME=str(user_home))).start()
        try:
            # Settings-file hooks that reach this daemon, beside the plugin: the two must not both answer.
            settings = user_home / ".claude" / "settings.json"
            data = json.loads(settings.read_text())
            settings.write_text(
                json.dumps({**data, "enabledPlugins": {}})
            )  # `hooks --install` refuses beside the plugin
            assert cli(sys.executable, "-m", "memoryd", "hooks", "--install").returncode == 0
            settings.write_text(
                json.dumps({**json.loads(settings.read_text()), "enabledPlugins": data["enabledPlugins"]})
            )
            with daemon.client() as c:
                r2 = c.post(
                    "/v1/memories",
                    json={
                        "cwd": str(project),
                        "name": "pnpm",
                        "type": "project",
                        "description": "use pnpm, never npm: the lockfile is pnpm-lock.yaml",
                        "body": "pnpm only.",
                    },
                )
                assert r2.status_code in (200, 201), r2.text
            prompt = "Which package manager should I use to install the dependencies?"
            with_both = cli(claude, "-p", prompt)
            assert with_both.returncode == 0, with_both.stderr
            sent = first_prompt_request(api, prompt)
            assert "pnpm-lock.yaml" in sent and one_door_each(sent), sent[:3000]

            # Plugin only: memoryd's recall reaches the model through the plugin's hook.
            assert cli(sys.executable, "-m", "memoryd", "hooks", "--uninstall").returncode == 0
            api.requests.clear()
            plugin_only = cli(claude, "-p", prompt)
            assert plugin_only.returncode == 0, plugin_only.stderr
            sent = first_prompt_request(api, prompt)
            assert "pnpm-lock.yaml" in sent and one_door_each(sent), sent[:3000]
        finally:
            daemon.kill()

        # A stopped daemon is said once in the session, with the command that starts it.
        api.requests.clear()
        down = cli(claude, "-p", "Say hello to the team")
        assert down.returncode == 0 and "Understood." in down.stdout, down.stderr
        sent = first_prompt_request(api, "Say hello to the team")
        assert sent.count(json.dumps(DOWN_NOTE)[1:-1]) == 1 and limits.INJECTED_MARKER not in sent

        assert cli(claude, "plugin", "uninstall", PLUGIN_ID).returncode == 0
        assert cli(claude, "plugin", "marketplace", "remove", MARKETPLACE_NAME).returncode == 0
    # Nothing of the plugin stays in force: no setting, install record or marketplace names it; Claude Code
    # marks its cached copy orphaned and deletes it itself later. (The memories and the backup of the
    # settings file `hooks --install` rewrote are the user's, and stay.)
    claude_dir = user_home / ".claude"
    for name in ("settings.json", "plugins/installed_plugins.json", "plugins/known_marketplaces.json"):
        assert "memoryd" not in (claude_dir / name).read_text(), name
    cached = list((claude_dir / "plugins" / "cache").glob("memoryd/memoryd/*"))
    assert all((version / ".orphaned_at").exists() for version in cached), cached
