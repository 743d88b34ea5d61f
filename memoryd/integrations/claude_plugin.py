"""How Claude Code is connected to memoryd: the plugin (`memoryd/claude_code_plugin/memoryd/`, listed by
`.claude-plugin/marketplace.json` at the repository's root and in the package) or the settings-file hooks of `memoryd
hooks --install`.

The plugin's hooks and the settings-file hooks both run `memoryd hook claude-code` (`memoryd.cli.hook_forward`);
when both are installed, the daemon answers each event once (`integrations/hook_repeats.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.integrations.settings_files import read_settings

PLUGIN_NAME = "memoryd"
MARKETPLACE_NAME = "memoryd"  # `name` in .claude-plugin/marketplace.json
PLUGIN_ID = f"{PLUGIN_NAME}@{MARKETPLACE_NAME}"
MARKETPLACE_DIRNAME = (
    "claude_code_plugin"  # memoryd/claude_code_plugin/: .claude-plugin/marketplace.json and the plugin folder memoryd/
)


def _settings_files(cwd: Path, env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """(scope, path) of Claude Code's settings files for `cwd`: the user's, then the project's two."""
    from memoryd.integrations.claude_code import settings_path

    return [(scope, settings_path(scope, cwd, dict(env))) for scope in ("user", "project", "local")]


def plugin_enabled(cwd: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The settings files that enable a `memoryd@…` plugin (from any marketplace), nearest last."""
    env = os.environ if env is None else env
    found = []
    for scope, path in _settings_files(cwd, env):
        data = read_settings(path, within=None if scope == "user" else cwd)
        enabled = data.get("enabledPlugins")
        if isinstance(enabled, dict) and any(k.split("@", 1)[0] == PLUGIN_NAME and v for k, v in enabled.items()):
            found.append(str(path))
    return found


def settings_hooks(cwd: Path, env: Mapping[str, str] | None = None) -> list[tuple[str, Path, dict[str, Any]]]:
    """(scope, settings file, handler) for each memoryd hook in Claude Code's settings files."""
    from memoryd.integrations.claude_code import is_memoryd_hook

    env = os.environ if env is None else env
    found = []
    for scope, path in _settings_files(cwd, env):
        hooks = read_settings(path, within=None if scope == "user" else cwd).get("hooks")
        for groups in (hooks or {}).values() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                for handler in group.get("hooks", []) if isinstance(group, dict) else ():
                    if is_memoryd_hook(handler):
                        found.append((scope, path, handler))
    return found


def hook_url(handler: dict[str, Any]) -> str | None:
    """The daemon URL a settings-file hook calls (its command's curl URL, or an http hook's url)."""
    from memoryd.integrations.hook_protocol import HOOK_PATH

    if handler.get("type") == "http":
        return str(handler.get("url", "")).removesuffix(HOOK_PATH) or None
    m = re.search(r"(https?://[^\s'\"]+?)" + re.escape(HOOK_PATH), str(handler.get("command", "")))
    return m.group(1) if m else None


def packaged_marketplace() -> Path:
    """The marketplace folder inside the package (`claude_code_plugin/`), there in a wheel install too;
    the repository's own `.claude-plugin/marketplace.json` lists the same plugin folder."""
    return Path(__file__).resolve().parents[1] / MARKETPLACE_DIRNAME


def install_commands(claude: str, source: str) -> list[list[str]]:
    """`claude plugin` commands that add the marketplace at `source` (a folder, git URL or owner/repo) and install the
    plugin."""
    return [[claude, "plugin", "marketplace", "add", source], [claude, "plugin", "install", PLUGIN_ID]]


def uninstall_commands(claude: str) -> list[list[str]]:
    return [[claude, "plugin", "uninstall", PLUGIN_ID], [claude, "plugin", "marketplace", "remove", MARKETPLACE_NAME]]
