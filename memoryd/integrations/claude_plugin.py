"""How Claude Code is connected to memoryd: the plugin (`memoryd/claude_code_plugin/memoryd/`, listed by
`.claude-plugin/marketplace.json` at the repository's root and in the package) or the settings-file hooks of `memoryd hooks --install`.

The plugin's hooks run `memoryd hook claude-code` (`memoryd.cli.hook`); the settings-file hooks call
the daemon with curl. The two must never both answer one event, so the plugin's command stands
aside for settings-file hooks that reach the running daemon (`settings_hook_urls`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping

PLUGIN_NAME = "memoryd"
MARKETPLACE_NAME = "memoryd"  # `name` in .claude-plugin/marketplace.json
PLUGIN_ID = f"{PLUGIN_NAME}@{MARKETPLACE_NAME}"
MARKETPLACE_DIRNAME = (
    "claude_code_plugin"  # memoryd/claude_code_plugin/: .claude-plugin/marketplace.json and the plugin folder memoryd/
)


def _settings_files(cwd: Path, env: Mapping[str, str]) -> list[Path]:
    from memoryd.integrations.claude_code import settings_path

    return [settings_path(scope, cwd, dict(env)) for scope in ("user", "project", "local")]  # type: ignore[arg-type]


def _settings(path: Path) -> dict[str, Any]:
    """A settings file's object; {} when missing or unusable (a FIFO, a directory, not JSON: never waited on)."""
    from memoryd.base.errors import InvalidRequest
    from memoryd.integrations.claude_code import read_settings

    try:
        return read_settings(path)
    except InvalidRequest:
        return {}


def plugin_enabled(cwd: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The settings files that enable a `memoryd@…` plugin (from any marketplace), nearest last."""
    env = os.environ if env is None else env
    found = []
    for path in _settings_files(cwd, env):
        data = _settings(path)
        enabled = data.get("enabledPlugins")
        if isinstance(enabled, dict) and any(k.split("@", 1)[0] == PLUGIN_NAME and v for k, v in enabled.items()):
            found.append(str(path))
    return found


def settings_hooks(cwd: Path, env: Mapping[str, str] | None = None) -> list[tuple[str, Path, dict[str, Any]]]:
    """(scope, settings file, handler) for each memoryd hook in Claude Code's settings files."""
    from memoryd.integrations.claude_code import HOOK_PATH, settings_path

    env = os.environ if env is None else env
    found = []
    for scope in ("user", "project", "local"):
        path = settings_path(scope, cwd, dict(env))  # type: ignore[arg-type]
        hooks = _settings(path).get("hooks")
        for groups in (hooks or {}).values() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                for handler in group.get("hooks", []) if isinstance(group, dict) else ():
                    if isinstance(handler, dict) and HOOK_PATH in str(handler.get("command", "")) + str(
                        handler.get("url", "")
                    ):
                        found.append((scope, path, handler))
    return found


def hook_url(handler: dict[str, Any]) -> str | None:
    """The daemon URL a settings-file hook calls (its command's curl URL, or an http hook's url)."""
    from memoryd.integrations.claude_code import HOOK_PATH

    if handler.get("type") == "http":
        return str(handler.get("url", "")).removesuffix(HOOK_PATH) or None
    m = re.search(r"(https?://[^\s'\"]+?)" + re.escape(HOOK_PATH), str(handler.get("command", "")))
    return m.group(1) if m else None


def settings_hook_urls(cwd: Path, env: Mapping[str, str] | None = None) -> set[str]:
    """The daemon URLs that memoryd's settings-file hooks for this project call."""
    return {url for _, _, handler in settings_hooks(cwd, env) if (url := hook_url(handler))}


def packaged_marketplace() -> Path:
    """The marketplace folder inside the package (`claude_code_plugin/`), there in a wheel install too;
    the repository's own `.claude-plugin/marketplace.json` lists the same plugin folder."""
    return Path(__file__).resolve().parents[1] / MARKETPLACE_DIRNAME


def install_commands(claude: str, source: str) -> list[list[str]]:
    """`claude plugin` commands that add the marketplace at `source` (a folder, git URL or owner/repo) and install the plugin."""
    return [[claude, "plugin", "marketplace", "add", source], [claude, "plugin", "install", PLUGIN_ID]]


def uninstall_commands(claude: str) -> list[list[str]]:
    return [[claude, "plugin", "uninstall", PLUGIN_ID], [claude, "plugin", "marketplace", "remove", MARKETPLACE_NAME]]
